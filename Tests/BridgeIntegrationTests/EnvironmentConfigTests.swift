import BridgeTestSupport
import Foundation
import Testing

/// Issue 25, item 4: a container configured by its environment alone — no bridge.yaml, only `DIRECTUS_BRIDGE__…`
/// variables (docs/configuration.md "Configuration from the environment").
@Suite(.serialized) struct EnvironmentConfigTests {
    static func environment(url: String) -> [String: String] {
        [
            "DIRECTUS_BRIDGE__DIRECTUS__URL": url,
            "DIRECTUS_BRIDGE__DIRECTUS__AUTH__TOKEN": "admin-static-token",
            "DIRECTUS_BRIDGE__SUBSCRIPTIONS__0__COLLECTION": "articles",
            "DIRECTUS_BRIDGE__DELIVERY__MODE": "live",
            "DIRECTUS_BRIDGE__DELIVERY__STATE_DIR": "./state",
            "DIRECTUS_BRIDGE__SINKS__0__NAME": "stdout",
            "DIRECTUS_BRIDGE__SINKS__0__TYPE": "ndjson",
            "DIRECTUS_BRIDGE__SHUTDOWN_TIMEOUT": "5s",
        ]
    }

    @Test func aBridgeWithoutAFileRunsOnItsEnvironment() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "environment-only")
        let environment = Self.environment(url: emulator.url)

        let validate = try BridgeProcess(arguments: ["validate"], directory: directory, environment: environment)
        #expect(validate.waitForExit() == 0, "\(validate.stderr)")
        #expect(validate.lines == ["ok"], "\(validate.stderr)")

        let bridge = try BridgeProcess(arguments: ["run"], directory: directory, environment: environment)
        defer { bridge.send(SIGKILL) }
        #expect(bridge.waitUntilConnected(), "bridge did not connect: \(bridge.stderr)")
        try emulator.create("articles", ["title": "from the environment"])
        #expect(
            bridge.waitUntil {
                $0.events.contains { ($0["data"] as? [String: Any])?["title"] as? String == "from the environment" }
            },
            "lines: \(bridge.lines) \(bridge.stderr)"
        )
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    /// A variable that cannot apply stops `validate` with exit 78 and names itself.
    @Test func aWrongVariableIsAConfigurationErrorNamingIt() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "environment-wrong")
        var environment = Self.environment(url: "http://127.0.0.1:9")
        environment["DIRECTUS_BRIDGE__SINKS__2__TYPE"] = "ndjson"
        let validate = try BridgeProcess(arguments: ["validate"], directory: directory, environment: environment)
        #expect(validate.waitForExit() == 78)
        #expect(
            validate.stderr.contains("DIRECTUS_BRIDGE__SINKS__2__TYPE:1:1: list position 2 skips position 1"),
            "\(validate.stderr)"
        )
    }
}
