import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeDirectus
import BridgeActivity
import BridgeSinks

/// Builds config values from YAML snippets through the real loader.
enum ConfigFixture {
    struct Failed: Error { var issues: String }

    /// A whole config with `subscription` (indented YAML of one list entry) as its only subscription.
    static func subscription(_ yaml: String) throws -> SubscriptionConfig {
        let indented = yaml.split(separator: "\n").enumerated().map { index, line in
            (index == 0 ? "  - " : "    ") + line
        }.joined(separator: "\n")
        let text = """
            directus:
              url: http://127.0.0.1:1
              auth:
                token: t
            subscriptions:
            \(indented)
            sinks:
              - type: ndjson
            """
        switch ConfigLoader.parse(text: text, path: "test.yaml", environment: [:], sinkTypes: SinkCatalog.configTypes) {
        case .success(let config): return config.subscriptions[0]
        case .failure(let error): throw Failed(issues: error.description)
        }
    }
}
