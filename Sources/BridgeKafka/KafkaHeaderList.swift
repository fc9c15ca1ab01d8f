internal import CRdKafka

/// The headers of one message, added straight into librdkafka's list (which copies each name and value): names are
/// static text and values lent bytes, so a caller producing from its own events builds no `String` and no array of
/// headers per message (BENCHMARKS.md, "Kafka: the header list from the event's bytes").
///
/// Made empty by `KafkaProducer` for each message and handed to librdkafka with it (or destroyed, if librdkafka
/// refuses the message); the list itself is made by the first header added, so a message without headers has none.
package struct KafkaHeaderList: KafkaHeaderAdding, ~Copyable {
    /// The list, once a header was added; owned by the producer's `produce`, which hands it over or destroys it.
    private(set) var pointer: OpaquePointer?

    init() {}

    /// Adds `name` with `value`'s bytes.
    package mutating func add(_ name: StaticString, bytes value: UnsafeRawBufferPointer) {
        add(UnsafeRawPointer(name.utf8Start), name.utf8CodeUnitCount, value)
    }

    /// Adds `name` with `value`'s UTF-8 bytes.
    package mutating func add(_ name: StaticString, _ value: String) {
        let added = value.utf8.withContiguousStorageIfAvailable { add(name, bytes: UnsafeRawBufferPointer($0)) }
        if added == nil {
            var value = value
            value.withUTF8 { add(name, bytes: UnsafeRawBufferPointer($0)) }
        }
    }

    /// Adds a header whose name is text (`KafkaMessage.headers`), with its length: a name passed as a C string would
    /// be copied into a new NUL-terminated array first.
    mutating func add(_ header: KafkaHeader) {
        var name = header.name
        var value = header.value
        name.withUTF8 { name in
            value.withUTF8 { value in
                add(UnsafeRawPointer(name.baseAddress), name.count, UnsafeRawBufferPointer(value))
            }
        }
    }

    private mutating func add(_ name: UnsafeRawPointer?, _ nameCount: Int, _ value: UnsafeRawBufferPointer) {
        // Eight, as `rd_kafka_producev`'s own header list starts with.
        if pointer == nil { pointer = rd_kafka_headers_new(8) }
        _ = rd_kafka_header_add(
            pointer,
            name?.assumingMemoryBound(to: CChar.self),
            nameCount,
            value.baseAddress,
            value.count
        )
    }
}
