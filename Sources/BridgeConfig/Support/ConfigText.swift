import BridgeSystem

/// Formatting of the effective configuration (`BridgeConfig.description`, `SinkSettings.yamlLines`): JSON-quoted
/// strings (so the dump parses back as YAML), flow lists, durations as written in bridge.yaml, and one placeholder
/// for every secret.
package enum ConfigText {
    /// What a secret is shown as.
    package static let redacted = "\"[REDACTED]\""

    /// `text` as a JSON (and YAML) string literal.
    package static func quoted(_ text: String) -> String {
        var bytes: [UInt8] = []
        appendJSONString(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `[a, b]`.
    package static func list(_ items: [String]) -> String { "[\(items.joined(separator: ", "))]" }

    /// `250ms`, `1m30s`.
    package static func duration(_ duration: Duration) -> String { DurationText.format(duration) }
}
