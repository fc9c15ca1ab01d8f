import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeDirectus
import BridgeActivity
import BridgeSinks

/// docs/configuration.md is the full reference: every key the decoder accepts has a row (or a dotted row such as
/// `reconnect.initial_delay`) in its tables.
@Suite struct DocumentationCoverageTests {
    @Test func everyAcceptedKeyIsDocumented() throws {
        let docs = try String(
            contentsOf: TestEnvironment.repositoryRoot.appendingPathComponent("docs/configuration.md"),
            encoding: .utf8
        )
        let sections: [[String]] = [
            ConfigKeys.root, ConfigKeys.directus, ConfigKeys.auth, ConfigKeys.tls, ConfigKeys.reconnect,
            ConfigKeys.subscription, ConfigKeys.delivery, ConfigKeys.sinkKeys(of: SinkCatalog.configTypes),
            ConfigKeys.http, ConfigKeys.log, ConfigKeys.state,
        ]
        for key in sections.joined() where key != "type" {
            let documented =
                docs.contains("| `\(key)` |") || docs.contains(".\(key)` |")
                || docs.contains("## `\(key)`") || docs.contains("| `\(key).")
            #expect(documented, "docs/configuration.md has no row for \"\(key)\"")
        }
    }
}
