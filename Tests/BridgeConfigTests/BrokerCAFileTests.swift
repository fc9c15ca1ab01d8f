import BridgeConfig
import BridgeSinks
import Testing

/// A broker sink's CA file is read as `ca_file` or as `tls: { ca_file }` (the contract writes the Redis sink's so,
/// "tls.ca_file like the other clients"), for every URL and NATS broker sink alike; both at once is refused.
@Suite struct BrokerCAFileTests {
    private static let pem = "/etc/bridge/ca.pem"
    private let files = InMemoryFiles([BrokerCAFileTests.pem: "-----BEGIN CERTIFICATE-----"])

    private func yaml(_ type: String, _ lines: [String]) -> String {
        minimalYAML.replacingOnce(
            "  - type: ndjson\n",
            with: (["- type: \(type)"] + lines.map { "  " + $0 }).map { "  \($0)\n" }.joined()
        )
    }

    private static let targets: [(type: String, target: String)] = [
        ("redis", "url: rediss://127.0.0.1"), ("mqtt", "url: mqtts://127.0.0.1"), ("amqp", "url: amqps://127.0.0.1"),
        ("jetstream", "servers: [\"tls://127.0.0.1:4222\"]"),
    ]

    @Test(arguments: targets.map(\.type))
    func eitherSpellingGivesTheCAFile(type: String) throws {
        let target = try #require(Self.targets.first { $0.type == type }?.target)
        for lines in [[target, "ca_file: \(Self.pem)"], [target, "tls:", "  ca_file: \(Self.pem)"]] {
            let sink = try #require(try config(yaml(type, lines), files: files).sinks.first)
            let caFile: String? =
                switch type {
                case "redis": sink.settings(as: RedisSinkConfig.self)?.caFile
                case "mqtt": sink.settings(as: MQTTSinkConfig.self)?.caFile
                case "amqp": sink.settings(as: AMQPSinkConfig.self)?.caFile
                default: sink.settings(as: JetStreamSinkConfig.self)?.caFile
                }
            #expect(caFile == Self.pem, "\(lines)")
        }
        let both = issues(yaml(type, [target, "ca_file: \(Self.pem)", "tls:", "  ca_file: \(Self.pem)"]), files: files)
        #expect(both.count == 1 && both.first?.contains("give the CA file once") == true, "\(both)")
        let unknown = issues(yaml(type, [target, "tls:", "  cafile: \(Self.pem)"]), files: files)
        #expect(unknown.first?.contains("unknown key \"cafile\"") == true, "\(unknown)")
    }
}
