import BridgeTestSupport
import Foundation
import Testing

/// The commands that never contact Directus (`status`, `dlq`, `resync`) run without its secrets (docs/configuration.md,
/// "What each command reads"): on the package the token sits in a root-only secrets file, unset in an operator's
/// shell. `validate` still names every undefined variable, and a variable these commands do need is named too.
@Suite struct OfflineCommandTests {
    /// A config whose Directus URL and token come from variables no test environment sets; `stateDir` as written.
    static func yaml(stateDir: String = "./state") -> String {
        """
        directus:
          url: ${OFFLINE_TEST_DIRECTUS_URL}
          auth:
            token: ${OFFLINE_TEST_DIRECTUS_TOKEN}
        subscriptions:
          - collection: articles
        delivery:
          mode: activity
          state_dir: \(stateDir)
        sinks:
          - type: ndjson
            path: "-"
        """
    }

    /// Runs `directus-bridge <arguments> --config bridge.yaml` over `yaml` in a new directory.
    func run(_ arguments: [String], yaml: String = OfflineCommandTests.yaml()) throws -> (
        status: Int32?, stdout: [String], stderr: String
    ) {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "offline-command")
        defer { try? FileManager.default.removeItem(at: directory) }
        try yaml.write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        let process = try BridgeProcess(arguments: arguments + ["--config", "bridge.yaml"], directory: directory)
        let status = process.waitForExit(timeout: 20)
        return (status, process.lines, process.stderr)
    }

    @Test(arguments: [["status"], ["dlq", "list"], ["dlq", "replay"], ["dlq", "purge"], ["resync", "articles"]])
    func runsWithoutTheDirectusVariables(arguments: [String]) throws {
        let result = try run(arguments)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        #expect(!result.stderr.contains("undefined variable"), "\(arguments): \(result.stderr)")
    }

    @Test func validateStillNamesEveryUndefinedVariable() throws {
        let result = try run(["validate"])
        #expect(result.status == 78)
        #expect(result.stderr.contains("bridge.yaml:2:8: undefined variable \"OFFLINE_TEST_DIRECTUS_URL\""))
        #expect(result.stderr.contains("bridge.yaml:4:12: undefined variable \"OFFLINE_TEST_DIRECTUS_TOKEN\""))
    }

    @Test(arguments: [["status"], ["dlq", "list"], ["resync", "articles"]])
    func aVariableTheCommandNeedsIsNamed(arguments: [String]) throws {
        let result = try run(arguments, yaml: Self.yaml(stateDir: "${OFFLINE_TEST_STATE_DIR}"))
        #expect(result.status == 78, "\(arguments): \(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(arguments): \(result.stderr)")
        #expect(lines.first?.hasPrefix("bridge.yaml:9:14: undefined variable \"OFFLINE_TEST_STATE_DIR\"") == true)
    }
}
