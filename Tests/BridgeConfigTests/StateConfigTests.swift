import BridgeConfig
import BridgeSystem
import Testing

/// The `state` section: `local` by default, `jetstream` with its servers, names, lease range and delivery mode.
@Suite struct StateConfigTests {
    @Test func localIsTheDefault() throws {
        let state = try config(minimalYAML).state
        #expect(state == StateConfig())
        #expect(state.backend == .local && state.bucket == "directus_bridge" && state.name == "default")
        #expect(state.lease == .seconds(10))
    }

    @Test func jetstreamWithEveryKey() throws {
        let yaml =
            minimalYAML
            + "delivery: { mode: activity }\nstate:\n  backend: jetstream\n"
            + "  servers: [\"nats://a:4222\", \"tls://b:4222\"]\n  bucket: bridges-1\n  name: orders_eu\n  lease: 5s\n"
        let state = try config(yaml).state
        #expect(
            state
                == StateConfig(
                    backend: .jetstream, servers: ["nats://a:4222", "tls://b:4222"], bucket: "bridges-1",
                    name: "orders_eu", lease: .seconds(5)))
        // auto may resolve to activity: decided at run time.
        #expect(try config(minimalYAML + "state: { backend: jetstream, servers: [\"nats://a:4222\"] }\n").state.backend == .jetstream)
    }

    @Test func jetstreamProblemsAreReportedWithTheirPositions() {
        let yaml =
            minimalYAML
            + "delivery: { mode: live }\nstate:\n  backend: jetstream\n  bucket: \"a.b\"\n  name: \"x y\"\n"
            + "  lease: 2s\n"
        #expect(
            issues(yaml) == [
                "bridge.yaml:11:12: state.servers is required with backend: jetstream (e.g. [\"nats://nats-1:4222\"])",
                "bridge.yaml:11:12: state.backend: jetstream needs delivery.mode activity (or auto resolving to it): "
                    + "shared cursors exist only in activity mode",
                "bridge.yaml:12:11: state.bucket must be 1 to 64 of A-Z, a-z, 0-9, _ and -; got \"a.b\"",
                "bridge.yaml:13:9: state.name must be 1 to 64 of A-Z, a-z, 0-9, _ and -; got \"x y\"",
                "bridge.yaml:14:10: state.lease must be between 3s and 10m, got 2s",
            ])
        #expect(
            issues(minimalYAML + "state: { backend: jetstream, servers: [], lease: 11m }\n") == [
                "bridge.yaml:9:39: state.servers must list at least one server with backend: jetstream",
                "bridge.yaml:9:50: state.lease must be between 3s and 10m, got 11m",
            ])
        #expect(
            issues(minimalYAML + "state: { backend: jetstream, servers: [\"http://a\"] }\n") == [
                "bridge.yaml:9:40: state.servers: \"http://a:80\" is not a NATS server URL: it must start with "
                    + "nats:// or tls://"
            ])
        #expect(
            issues(minimalYAML + "state: { backend: jetstream, servers: [\"nats://a:99999\"] }\n") == [
                "bridge.yaml:9:40: state.servers: \"nats://a:99999\" is not a NATS server URL: it has an invalid port "
                    + "\"99999\" (allowed: 1…65535)"
            ])
        #expect(issues(minimalYAML + "state: { backend: s3 }\n").count == 1)
    }
}
