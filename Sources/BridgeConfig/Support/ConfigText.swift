package import BridgeSystem

/// Formatting of the effective configuration (`BridgeConfig.description`, `SinkSettings.yamlLines`): JSON-quoted
/// strings (so the dump parses back as YAML), flow lists, durations as written in bridge.yaml, and one placeholder
/// for every secret.
package enum ConfigText {
    /// What a secret is shown as.
    package static let redacted = "\"[REDACTED]\""

    /// `text` as a JSON (and YAML) string literal, with every `$` written `$$`: values are interpolated when the
    /// file is read (`${NAME}`, `$$` for a literal `$`), so the dump must escape what it shows or reading it back
    /// would change the value, even into an environment variable's.
    package static func quoted(_ text: String) -> String {
        var bytes: [UInt8] = []
        appendJSONString(escapingDollars(text), to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A proxy as the dump shows it: `"http://host:port"`, and a note when its user and password are left out.
    package static func proxy(_ proxy: HTTPProxy) -> String {
        quoted(proxy.description) + (proxy.user == nil ? "" : "  # with a user and password, not shown")
    }

    /// A subscription's query as JSON, string values escaped like ``quoted(_:)`` (keys are not interpolated, so
    /// they stay as they are).
    package static func query(_ value: QueryValue) -> String { escapingDollars(in: value).jsonText }

    private static func escapingDollars(_ text: String) -> String {
        guard text.unicodeScalars.contains("$") else { return text }
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            escaped.append(scalar)
            if scalar == "$" { escaped.append(scalar) }
        }
        return String(escaped)
    }

    private static func escapingDollars(in value: QueryValue) -> QueryValue {
        switch value {
        case .string(let text): .string(escapingDollars(text))
        case .array(let items): .array(items.map(escapingDollars(in:)))
        case .object(let members): .object(members.map { (key: $0.key, value: escapingDollars(in: $0.value)) })
        case .null, .bool, .number: value
        }
    }

    /// `[a, b]`.
    package static func list(_ items: [String]) -> String { "[\(items.joined(separator: ", "))]" }

    /// `250ms`, `1m30s`.
    package static func duration(_ duration: Duration) -> String { DurationText.format(duration) }
}
