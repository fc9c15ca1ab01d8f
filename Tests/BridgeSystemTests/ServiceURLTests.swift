import BridgeSystem
import Testing

/// Broker URLs with credentials (Redis, AMQP, MQTT): parsed parts, decoded credentials, shown without them.
@Suite struct ServiceURLTests {
    private let ports = ["redis": 6379, "rediss": 6379]

    @Test func partsAndDefaults() throws {
        let plain = try ServiceURL("redis://cache-1", defaultPorts: ports)
        #expect(plain.scheme == "redis" && plain.host == "cache-1" && plain.port == 6379)
        #expect(plain.user == nil && plain.password == nil && plain.path == "")

        let full = try ServiceURL("REDISS://bridge:s%40cr%3At@[::1]:7000/3", defaultPorts: ports)
        #expect(full.scheme == "rediss" && full.host == "::1" && full.port == 7000 && full.path == "3")
        #expect(full.user == "bridge" && full.password == "s@cr:t")
        #expect(full.description == "rediss://[::1]:7000")

        let passwordOnly = try ServiceURL("redis://:secret@127.0.0.1", defaultPorts: ports)
        #expect(passwordOnly.user == nil && passwordOnly.password == "secret")
    }

    @Test func refusesWhatItCannotUseWithoutShowingTheCredentials() {
        for text in [
            "http://host", "redis:/host", "redis://", "redis://host:0", "redis://host:65536", "redis://host:12a",
            "redis://u:p@host?db=1", "redis://host/0#x", "redis://ho st", "redis://u:bad%zzsecret@host",
            "redis://[::1", "redis://h*st",
        ] {
            do {
                _ = try ServiceURL(text, defaultPorts: ports)
                Issue.record("accepted \(text)")
            } catch {
                #expect(!error.message.contains("secret"), "\(error.message)")
            }
        }
    }
}
