import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeDirectus
import BridgeActivity
import BridgeSinks
import Testing

/// The sink registry (`SinkCatalog`, `SinkRegistration`): every registered type decodes its entries and is found
/// for them, each entry has an identity that stays the same across loads (state files and metric labels carry
/// it) and never shows a target's secrets, and a type nobody registered is refused.
@Suite struct SinkCatalogTests {
    /// A minimal entry of each registered type, after `- type: <name>`. A new type needs one here.
    static let minimalEntries: [String: [String]] = [
        "ndjson": ["  path: \"-\""],
        "webhook": ["  url: http://127.0.0.1:9000/hook?token=abc123"],
        "jetstream": ["  servers: [\"nats://127.0.0.1:4222\"]"],
        "kafka": ["  brokers: [\"127.0.0.1:9092\"]"],
        "amqp": ["  url: amqp://bridge:secret-pw@127.0.0.1:5672/prod"],
        "redis": ["  url: redis://:secret-pw@127.0.0.1:6379/0"],
        "mqtt": ["  url: mqtt://bridge:secret-pw@127.0.0.1:1883"],
    ]

    /// The minimal configuration with `entries` as its sinks, each a list of lines after `- type: <name>`.
    private func yaml(_ entries: [(type: String, lines: [String])]) -> String {
        let sinks = entries.flatMap { entry in ["  - type: \(entry.type)"] + entry.lines.map { "  " + $0 } }
        return minimalYAML.replacingOnce("  - type: ndjson\n", with: sinks.joined(separator: "\n") + "\n")
    }

    @Test func everyRegisteredTypeHasADistinctNameAndAMinimalEntryHere() {
        let names = SinkCatalog.registrations.map(\.configType.name)
        #expect(Set(names).count == names.count, "\(names)")
        #expect(Set(names) == Set(Self.minimalEntries.keys), "add a minimal entry for each new sink type")
        #expect(SinkCatalog.configTypes.map(\.name) == names)
    }

    @Test(arguments: SinkCatalog.registrations.map(\.configType.name))
    func everyTypeDecodesItsEntryAndIsFoundForIt(type: String) throws {
        let lines = try #require(Self.minimalEntries[type])
        let loaded = try config(yaml([(type, lines)]))
        let sink = try #require(loaded.sinks.first)
        #expect(sink.type == type)
        let registration = try #require(SinkCatalog.registration(of: sink))
        #expect(registration.configType.name == type)
        #expect(registration.handles(sink))
        // Only its own registration takes the entry.
        #expect(SinkCatalog.registrations.filter { $0.handles(sink) }.count == 1)
    }

    @Test(arguments: SinkCatalog.registrations.map(\.configType.name))
    func anIdentityIsStableAcrossLoadsAndNamesItsPosition(type: String) throws {
        let lines = try #require(Self.minimalEntries[type])
        let text = yaml([("ndjson", ["  path: other.ndjson"]), (type, lines)])
        func identity() throws -> String {
            let sink = try #require(try config(text).sinks.last)
            return try #require(SinkCatalog.registration(of: sink)).identity(of: sink, index: 1)
        }
        let first = try identity()
        #expect(try identity() == first)
        #expect(first.hasPrefix("1-"), "\(first)")
        let sink = try #require(try config(text).sinks.last)
        let moved = try #require(SinkCatalog.registration(of: sink)).identity(of: sink, index: 2)
        #expect(moved != first && moved.hasPrefix("2-"), "\(moved)")
    }

    /// The ids of existing installations: an outbox row or a cursor keyed by an id that changed would be orphaned.
    @Test func identitiesOfExistingInstallationsDoNotChange() throws {
        let loaded = try config(yaml([
            ("ndjson", Self.minimalEntries["ndjson"] ?? []), ("webhook", Self.minimalEntries["webhook"] ?? []),
        ]))
        let ids = try loaded.sinks.enumerated().map { index, sink in
            try #require(SinkCatalog.registration(of: sink)).identity(of: sink, index: index)
        }
        #expect(ids == ["0-ndjson-ed1da627", "1-127.0.0.1:9000-6da47e72"])
        #expect(!ids.contains { $0.contains("abc123") || $0.contains("token") }, "the URL's query stays out of ids")
    }

    /// Issue 23, item 2: a broker sink's summary no longer shows a server URL's user information, but its id — the
    /// key of its dead letters and cursor — is still the hash of the summary as version 0.2 wrote it.
    @Test func brokerSinkIdentitiesDoNotChangeWithHowTheirServersAreShown() throws {
        let loaded = try config(yaml([
            ("jetstream", ["  servers: [\"nats://bridge:NatsPassword_1@127.0.0.1:4222\", \"tls://nats-2\"]"]),
            ("kafka", Self.minimalEntries["kafka"] ?? []),
        ]))
        let ids = try loaded.sinks.enumerated().map { index, sink in
            try #require(SinkCatalog.registration(of: sink)).identity(of: sink, index: index)
        }
        #expect(ids == ["0-jetstream-f5ce1bc4", "1-kafka-8b2a7cb3"])
        #expect(
            loaded.sinks[0].settings.summary
                == "jetstream:nats://127.0.0.1:4222,tls://nats-2:4222/directus.{collection}.{event}")
    }

    @Test func aDifferentTargetGetsADifferentIdentity() throws {
        let loaded = try config(yaml([
            ("webhook", ["  url: http://127.0.0.1:9000/hook?token=abc123"]),
            ("webhook", ["  url: http://127.0.0.1:9000/hook?token=other"]),
        ]))
        let registration = try #require(loaded.sinks.first.flatMap(SinkCatalog.registration(of:)))
        let ids = loaded.sinks.map { registration.identity(of: $0, index: 0) }
        #expect(ids[0] != ids[1], "\(ids)")
    }

    @Test func aTypeNobodyRegisteredIsRefused() {
        let names = SinkCatalog.configTypes.map(\.name)
        #expect(
            issues(yaml([("carrier-pigeon", ["  loft: roof"])])) == [
                "bridge.yaml:8:11: sinks[0].type: unknown value \"carrier-pigeon\" (allowed: "
                    + names.joined(separator: ", ") + ")"
            ]
        )
    }
}
