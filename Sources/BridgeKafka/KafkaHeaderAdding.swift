/// Where a message's headers are added one by one: librdkafka's list of a message the sink produces from its batch
/// (`KafkaHeaderList`), or the array of a message made whole (`KafkaMessage.headers`). One function can then name a
/// message's headers for both, so the sink's messages and its probe's test event cannot differ in names or order.
package protocol KafkaHeaderAdding: ~Copyable {
    /// Adds `name` with `value`'s bytes.
    mutating func add(_ name: StaticString, bytes value: UnsafeRawBufferPointer)
    /// Adds `name` with `value`'s UTF-8 bytes.
    mutating func add(_ name: StaticString, _ value: String)
}

extension Array: KafkaHeaderAdding where Element == KafkaHeader {
    /// Appends `name` with `value`'s bytes as text.
    package mutating func add(_ name: StaticString, bytes value: UnsafeRawBufferPointer) {
        append(KafkaHeader(name: name.description, value: String(decoding: value, as: UTF8.self)))
    }

    /// Appends `name` with `value`.
    package mutating func add(_ name: StaticString, _ value: String) {
        append(KafkaHeader(name: name.description, value: value))
    }
}
