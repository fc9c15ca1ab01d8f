/// An extra request header a sink sends (a webhook sink's `headers`), in file order.
public struct HTTPHeader: Sendable, Equatable {
    /// The header name as written.
    public var name: String
    /// The value.
    public var value: String

    /// Creates a header.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
