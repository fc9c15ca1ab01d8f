import BridgeSinks
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeApp

/// Every place that says in one line what the bridge writes to names every sink type it has: twice a new sink was
/// left out of them (Kafka and NATS in 0.2, Redis, RabbitMQ and MQTT in 0.3, the `--help` headline both times).
@Suite struct SinkDescriptionTests {
    /// How the descriptions name each registered `type:`.
    static let spoken: [String: String] = [
        "ndjson": "NDJSON", "webhook": "webhooks", "kafka": "Kafka", "jetstream": "JetStream", "redis": "Redis",
        "amqp": "RabbitMQ", "mqtt": "MQTT",
    ]

    static func file(_ path: String) -> String {
        (try? String(contentsOf: TestEnvironment.repositoryRoot.appendingPathComponent(path), encoding: .utf8)) ?? ""
    }

    /// The one-line descriptions: `--help`'s first line, the README's first paragraph, the unit's `Description=`,
    /// the man page's NAME line and the package's long description.
    static let descriptions: [(place: String, text: String)] = [
        ("--help", String(CommandLineParser.helpText.prefix { $0 != "\n" })),
        ("README.md", String(file("README.md").components(separatedBy: "\n\n").dropFirst().first ?? "")),
        (
            "directus-bridge.service",
            file("packaging/directus-bridge.service").split(separator: "\n")
                .first { $0.hasPrefix("Description=") }.map(String.init) ?? ""
        ),
        (
            "directus-bridge.1",
            file("packaging/directus-bridge.1").components(separatedBy: ".SH NAME\n").dropFirst().first?
                .split(separator: "\n").first.map(String.init) ?? ""
        ),
        (
            "package.sh",
            file("scripts/package.sh").components(separatedBy: "Description: ").dropFirst().first?
                .components(separatedBy: "\n .\n").first ?? ""
        ),
    ]

    @Test func everyRegisteredTypeHasASpokenName() {
        #expect(Set(SinkCatalog.configTypes.map(\.name)) == Set(Self.spoken.keys))
    }

    @Test(arguments: descriptions.map(\.place))
    func theDescriptionNamesEverySink(place: String) throws {
        let text = try #require(Self.descriptions.first { $0.place == place }?.text)
        #expect(!text.isEmpty, "\(place): description not found")
        for type in SinkCatalog.configTypes.map(\.name) {
            let name = try #require(Self.spoken[type])
            #expect(text.contains(name), "\(place) does not name \(name): \(text)")
        }
    }
}
