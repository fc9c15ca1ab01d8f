package import BridgeConfig
package import BridgeRedis
import BridgeSystem

/// A Redis Streams sink (`type: redis`): each event is appended with `XADD` to the stream its template names, as
/// the fields `id`, `type`, `collection`, `key`, `event` and `payload`, and counts as delivered when `XADD`
/// answered. Within the dedup window a re-sent event id is not appended twice (`RedisDedupScript`).
package struct RedisSinkConfig: URLBrokerSettings, Equatable {
    /// `redis://[user[:password]@]host[:port][/db]`, `rediss://` for TLS (`url`). Required.
    package var url: String
    /// The stream's key template (`stream`); `{collection}` and `{event}` are replaced per event.
    /// Default: `directus.{collection}`.
    package var stream: String
    /// `XADD … MAXLEN ~ N` (`maxlen`): 0 never trims. Default: 0.
    package var maxLength: Int
    /// A CA file (PEM) trusted besides the system's for `rediss://` (`ca_file`). Default: none.
    package var caFile: String?
    /// Events appended and not answered at most (`max_in_flight`), 1…100,000: the size of one pipeline. Default:
    /// 1000.
    package var maxInFlight: Int
    /// How long an appended event id is remembered, so that a re-send is not appended twice (`dedup_window`); `0s`
    /// turns it off (a plain `XADD`, one key less per event). Default: 24h.
    package var dedupWindow: Duration

    /// The default of `stream`.
    package static let defaultStream = "directus.{collection}"
    /// The default of `maxInFlight`.
    package static let defaultMaxInFlight = 1_000
    /// The default of `dedupWindow`.
    package static let defaultDedupWindow: Duration = .seconds(86_400)

    /// Creates a configuration with the defaults for everything but `url`.
    package init(
        url: String,
        stream: String = RedisSinkConfig.defaultStream,
        maxLength: Int = 0,
        caFile: String? = nil,
        maxInFlight: Int = RedisSinkConfig.defaultMaxInFlight,
        dedupWindow: Duration = RedisSinkConfig.defaultDedupWindow
    ) {
        self.url = url
        self.stream = stream
        self.maxLength = maxLength
        self.caFile = caFile
        self.maxInFlight = maxInFlight
        self.dedupWindow = dedupWindow
    }

    /// The stream's key template.
    package var destination: String { stream }

    /// `stream` and `maxlen`.
    package var destinationYAMLLines: [String] { ["stream: \(ConfigText.quoted(stream))", "maxlen: \(maxLength)"] }

    /// `dedup_window`.
    package var trailingYAMLLines: [String] { ["dedup_window: \(ConfigText.duration(dedupWindow))"] }

    /// The client's settings (the URL was checked when the file was read).
    package func clientSettings() throws(RedisError) -> RedisSettings {
        try RedisSettings(url: url, caFile: caFile, maxInFlight: maxInFlight)
    }

    /// How entries are appended.
    package var streamSettings: RedisStreamSettings {
        RedisStreamSettings(maxLength: maxLength, dedupWindow: dedupWindow)
    }

    /// How `sinks` entries of `type: redis` are read.
    package static let configType = SinkConfigType(
        name: "redis",
        keys: keys(["stream", "maxlen"], then: ["dedup_window"]),
        decode: { decoder, map in decode(&decoder, map) }
    )

    private static func decode(_ decoder: inout ConfigDecoder, _ map: MappingView) -> RedisSinkConfig? {
        let server = decodeServer(
            &decoder,
            map,
            example: "redis://host:6379",
            defaultMaxInFlight: defaultMaxInFlight,
            range: 1...100_000
        ) { url throws(RedisError) in _ = try RedisSettings(url: url) }
        var config = RedisSinkConfig(url: server.url, caFile: server.caFile, maxInFlight: server.maxInFlight)
        config.stream = EventNameTemplate.decode(
            config.stream, key: "stream", &decoder, map, refusal: "is not a usable stream key (1 to 1024 bytes)"
        ) { name throws(RedisError) in
            guard !name.isEmpty, name.utf8.count <= 1024 else {
                throw RedisError(kind: .configuration, message: "bad stream key")
            }
        }
        config.maxLength = decoder.integer(map, "maxlen", default: 0, range: 0...1_000_000_000)
        config.dedupWindow = decoder.duration(
            map,
            "dedup_window",
            default: defaultDedupWindow,
            allowZero: true,
            atLeast: .seconds(1)
        )
        return server.isValid ? config : nil
    }
}
