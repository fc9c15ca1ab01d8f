/// The keys each section of `bridge.yaml` accepts, in one place (documented in docs/configuration.md).
enum ConfigKeys {
    static let root = ["directus", "subscriptions", "delivery", "sinks", "http", "log", "state", "shutdown_timeout"]
    static let directus = [
        "url", "websocket_path", "auth", "tls", "connect_timeout", "request_timeout", "heartbeat", "reconnect",
        "proxy",
    ]
    static let auth = ["token", "token_file", "email", "password", "password_file", "otp", "mode"]
    static let tls = ["ca_file", "insecure_skip_verify"]
    static let reconnect = ["initial_delay", "max_delay", "reset_after"]
    static let subscription = ["collection", "uid", "events", "query", "snapshot"]
    static let delivery = ["mode", "poll_interval", "state_dir", "max_queue", "max_queue_bytes"]
    /// Every key a sink of any of `types` may have, in a stable order.
    static func sinkKeys(of types: [SinkConfigType]) -> [String] {
        var keys = SinkConfigType.sharedKeys
        for key in types.flatMap(\.keys) where !keys.contains(key) { keys.append(key) }
        return keys
    }
    static let http = ["listen"]
    static let log = ["level", "format", "stats_interval", "progress_interval"]
    static let state = ["backend", "servers", "bucket", "name", "lease"]

    /// Sections by dotted name (list entries as `name[]`), searched to say where a misplaced key belongs.
    static func sections(sinkTypes: [SinkConfigType]) -> [(name: String, keys: [String])] {
        [
            ("", root), ("directus", directus), ("directus.auth", auth), ("directus.tls", tls),
            ("directus.reconnect", reconnect), ("subscriptions[]", subscription), ("delivery", delivery),
            ("sinks[]", sinkKeys(of: sinkTypes)), ("http", http), ("log", log), ("state", state),
        ]
    }

    /// The section that has `key`, when exactly one does (so the hint is never ambiguous).
    static func section(holding key: String, sinkTypes: [SinkConfigType]) -> String? {
        let homes = sections(sinkTypes: sinkTypes).filter { $0.keys.contains(key) }
        guard homes.count == 1, let home = homes.first else { return nil }
        return home.name
    }

    /// The section name of a mapping's dotted name: list indexes become `[]` (`sinks[2]` → `sinks[]`).
    static func sectionName(of name: String) -> String {
        var result = ""
        var inIndex = false
        for character in name {
            if character == "[" {
                inIndex = true
                result += "[]"
            } else if character == "]" {
                inIndex = false
            } else if !inIndex {
                result.append(character)
            }
        }
        return result
    }

    /// "at the top level", "under \"delivery\"", "in a \"sinks\" entry".
    static func describe(section: String) -> String {
        if section.isEmpty { return "at the top level" }
        if section.hasSuffix("[]") { return "in a \"\(section.dropLast(2))\" entry" }
        return "under \"\(section)\""
    }
}
