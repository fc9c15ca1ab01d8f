package import BridgeConfig
package import BridgeSystem

/// The settings of a sink that reaches its server by one URL (Redis, AMQP, MQTT): `url` with the credentials in
/// it, a CA file for the TLS scheme (`ca_file` or `tls.ca_file`) and the bound on what is in flight
/// (`max_in_flight`). A new sink of this kind declares only its own keys: `secrets`, `summary` and `yamlLines` come
/// from here, and `decodeServer` reads the three shared keys.
package protocol URLBrokerSettings: SinkSettings {
    /// The server's URL, credentials included (`url`).
    var url: String { get }
    /// A CA file (PEM) for the TLS scheme (`ca_file`); nil: none.
    var caFile: String? { get }
    /// Sent and not yet acknowledged at most (`max_in_flight`).
    var maxInFlight: Int { get }
    /// How the sink's entries are read; its `name` starts `summary`.
    static var configType: SinkConfigType { get }
    /// What the sink writes to on the server, after the URL in `summary` (the stream, topic or exchange).
    var destination: String { get }
    /// The sink's own YAML lines, shown between `url` and `ca_file`.
    var destinationYAMLLines: [String] { get }
    /// The sink's own YAML lines shown after `max_in_flight`. Default: none.
    var trailingYAMLLines: [String] { get }
}

extension URLBrokerSettings {
    /// None.
    package var trailingYAMLLines: [String] { [] }

    /// The password in the URL.
    package var secrets: [String] { URLCredentials.secrets(in: url) }

    /// `<type>:<scheme>://host:port/<destination>` (`redis:redis://127.0.0.1:6379/directus.{collection}`). Sink ids
    /// hash it: it keeps this text.
    package var summary: String { Self.configType.name + ":" + ShownURL.of(url) + "/" + destination }

    /// `url` (redacted), the sink's own lines, `ca_file` when set, `max_in_flight`, then the sink's trailing lines.
    package var yamlLines: [String] {
        var lines = ["url: \(ConfigText.quoted(URLCredentials.redacted(url)))"] + destinationYAMLLines
        if let caFile { lines.append("ca_file: \(ConfigText.quoted(caFile))") }
        return lines + ["max_in_flight: \(maxInFlight)"] + trailingYAMLLines
    }

    /// The keys of such an entry in documentation order: `url`, the sink's `own` keys, `ca_file`, `tls`,
    /// `max_in_flight`, then `trailing`.
    package static func keys(_ own: [String], then trailing: [String] = []) -> [String] {
        ["url"] + own + ["ca_file", "tls", "max_in_flight"] + trailing
    }

    /// Reads `url` (required; `accepts` refuses what the client would refuse, with its message, and `example` is the
    /// hint when the key is missing), the CA file and `max_in_flight` (`range`, or `defaultMaxInFlight` when
    /// absent), reporting every problem on `decoder`.
    package static func decodeServer<Kind>(
        _ decoder: inout ConfigDecoder,
        _ map: MappingView,
        example: String,
        defaultMaxInFlight: Int,
        range: ClosedRange<Int>,
        accepts: (String) throws(ClientError<Kind>) -> Void
    ) -> URLBrokerServerKeys {
        let present = decoder.requirePresent(map, "url", hint: " (\(configType.name) sinks need \(example))")
        let url = decoder.string(map, "url") ?? ""
        var valid = present && !url.isEmpty
        if valid, let node = map["url"] {
            do throws(ClientError<Kind>) {
                try accepts(url)
            } catch {
                decoder.report("\(map.field("url")): \(error.message)", at: node.mark)
                valid = false
            }
        }
        return URLBrokerServerKeys(
            url: url,
            isValid: valid,
            caFile: decoder.brokerCAFile(map),
            maxInFlight: decoder.integer(map, "max_in_flight", default: defaultMaxInFlight, range: range)
        )
    }
}

/// `url`, the CA file and `max_in_flight` of one `URLBrokerSettings` entry as read.
package struct URLBrokerServerKeys: Sendable {
    /// The URL as written; "" when missing.
    package var url: String
    /// Whether `url` is present and the client accepts it (when not, the entry is refused and the issue reported).
    package var isValid: Bool
    /// `ca_file` or `tls.ca_file`; nil when neither is set.
    package var caFile: String?
    /// `max_in_flight`, or the sink's default.
    package var maxInFlight: Int
}
