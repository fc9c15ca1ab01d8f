import BridgeTestSupport
import Foundation
import Testing

/// `--set KEY.PATH=VALUE` on the binary's command line (docs/configuration.md "Settings on the command line"): it
/// wins over the file and the `DIRECTUS_BRIDGE__…` variables; a malformed one is a usage error, one that cannot apply
/// a configuration error naming it.
@Suite(.serialized) struct SetOptionTests {
    @Test func aSettingRedirectsTheSinkOverTheFileAndTheEnvironment() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "set-option")
        try """
        directus:
          url: \(emulator.url)
          auth: { token: admin-static-token }
        subscriptions:
          - collection: articles
        delivery: { mode: live, state_dir: ./state }
        sinks:
          - { name: events, type: ndjson, path: "-" }
        shutdown_timeout: 5s
        """.write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        let environment = ["DIRECTUS_BRIDGE__SINKS__0__PATH": "from-the-environment.ndjson"]
        let arguments = ["-c", "bridge.yaml", "--set", "sinks.0.path=from-set.ndjson"]

        let validate = try BridgeProcess(
            arguments: ["validate"] + arguments, directory: directory, environment: environment)
        #expect(validate.waitForExit() == 0, "\(validate.stderr)")
        #expect(validate.lines == ["ok"], "\(validate.stderr)")

        let bridge = try BridgeProcess(arguments: ["run"] + arguments, directory: directory, environment: environment)
        defer { bridge.send(SIGKILL) }
        #expect(bridge.waitUntilConnected(), "bridge did not connect: \(bridge.stderr)")
        try emulator.create("articles", ["title": "redirected by --set"])
        let file = directory.appendingPathComponent("from-set.ndjson")
        let arrived = bridge.waitUntil { _ in
            ((try? String(contentsOf: file, encoding: .utf8)) ?? "").contains("redirected by --set")
        }
        #expect(arrived, "stderr: \(bridge.stderr)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        #expect(bridge.lines.isEmpty, "nothing on stdout: the setting won over the file's \"-\"")
        let environmentFile = directory.appendingPathComponent("from-the-environment.ndjson")
        #expect(!FileManager.default.fileExists(atPath: environmentFile.path), "the setting won over the variable")
    }

    @Test func aMalformedSettingIsAUsageErrorAndOneThatCannotApplyAConfigurationError() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "set-option-wrong")
        let malformed = try BridgeProcess(arguments: ["status", "--set", "log.level"], directory: directory)
        #expect(malformed.waitForExit() == 64)
        #expect(malformed.stderr.contains("--set \"log.level\": expected KEY.PATH=VALUE"), "\(malformed.stderr)")

        // No file: the settings alone are the configuration, and the one that skips a list position is named.
        let settings = [
            "directus.url=http://127.0.0.1:9", "directus.auth.token=t", "subscriptions.0.collection=articles",
            "sinks.0.type=ndjson", "sinks.0.name=out", "sinks.2.type=ndjson",
        ].flatMap { ["-s", $0] }
        let validate = try BridgeProcess(arguments: ["validate"] + settings, directory: directory)
        #expect(validate.waitForExit() == 78)
        #expect(
            validate.stderr.contains("--set sinks.2.type:1:1: list position 2 skips position 1"), "\(validate.stderr)")
        let whole = try BridgeProcess(arguments: ["validate"] + settings.dropLast(2), directory: directory)
        #expect(whole.waitForExit() == 0, "\(whole.stderr)")
        #expect(whole.lines == ["ok"])
    }
}
