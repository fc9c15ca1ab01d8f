/// How one sink type reads its entry of `sinks`: its `type` name, the keys it accepts besides the shared ones,
/// and a decoder for them. Registered by the sinks layer (`SinkCatalog`), which this module does not know.
public struct SinkConfigType: Sendable {
    /// The keys of every sink entry, decoded into `SinkConfig` itself.
    public static let sharedKeys = ["name", "type", "collections", "events", "format"]

    /// The `type` value (`ndjson`, `webhook`).
    public let name: String
    /// The keys of this type besides `sharedKeys`, in documentation order.
    public let keys: [String]
    /// Reads the type's keys from the entry; reports problems on the decoder and returns nil when a required
    /// key is missing or invalid.
    let decode: @Sendable (inout ConfigDecoder, MappingView) -> (any SinkSettings)?

    /// Creates a sink type. `decode` gets the entry as a mapping already checked for unknown keys.
    package init(
        name: String,
        keys: [String],
        decode: @escaping @Sendable (inout ConfigDecoder, MappingView) -> (any SinkSettings)?
    ) {
        self.name = name
        self.keys = keys
        self.decode = decode
    }

    /// Every key an entry of this type may have: `name`, `type`, the type's own, then the filters.
    public var allKeys: [String] { ["name", "type"] + keys + Self.sharedKeys.filter { $0 != "name" && $0 != "type" } }
}
