import BridgeActivity
import BridgeConfig
import BridgeCore
import BridgeDirectus
import BridgeEvents
import BridgeSinks
import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeConfig

/// Issue 25, item 4: `DIRECTUS_BRIDGE__…` variables set values of bridge.yaml, over the file's or without a file
/// (docs/configuration.md "Configuration from the environment").
@Suite struct EnvironmentOverrideTests {
    /// A file system without any file: the environment alone is the configuration.
    struct NoFiles: ConfigFileSystem {
        func readFile(atPath path: String, use: ConfigFileUse) -> Result<[UInt8], ConfigFileProblem> {
            .failure(.missing)
        }
    }

    static let containerEnvironment = [
        "DIRECTUS_BRIDGE__DIRECTUS__URL": "https://cms.example.com",
        "DIRECTUS_BRIDGE__DIRECTUS__AUTH__TOKEN": "${DIRECTUS_TOKEN}",
        "DIRECTUS_TOKEN": "t0ken",
        "DIRECTUS_BRIDGE__SUBSCRIPTIONS__0__COLLECTION": "articles",
        "DIRECTUS_BRIDGE__SUBSCRIPTIONS__1__COLLECTION": "comments",
        "DIRECTUS_BRIDGE__DELIVERY__STATE_DIR": "/data",
        "DIRECTUS_BRIDGE__SINKS__0__NAME": "out",
        "DIRECTUS_BRIDGE__SINKS__0__TYPE": "ndjson",
        "DIRECTUS_BRIDGE__SINKS__1__NAME": "topic",
        "DIRECTUS_BRIDGE__SINKS__1__TYPE": "kafka",
        "DIRECTUS_BRIDGE__SINKS__1__BROKERS": #"["kafka-1:9092", "kafka-2:9092"]"#,
        "DIRECTUS_BRIDGE__LOG__FORMAT": "json",
        "DIRECTUS_BRIDGE_LISTEN": "not an override: one underscore",
    ]

    @Test func theEnvironmentAloneIsAWholeConfiguration() throws {
        let config = try ConfigLoader.load(
            path: "bridge.yaml",
            environment: Self.containerEnvironment,
            sinkTypes: SinkCatalog.configTypes,
            files: NoFiles()
        ).get()
        #expect(config.directus.url.description == "https://cms.example.com")
        // A value is not interpolated again: ${DIRECTUS_TOKEN} stays text (use the file for `${…}`).
        #expect(config.directus.auth.credentials == .token("${DIRECTUS_TOKEN}"))
        #expect(config.subscriptions.map(\.uid) == ["articles", "comments"])
        #expect(config.delivery.stateDir == "/data")
        #expect(config.sinks.map(\.name) == ["out", "topic"])
        #expect(config.log.format == .json)
    }

    @Test func aVariableWinsOverTheFileAndAddsWhatTheFileLacks() throws {
        let yaml = """
            directus:
              url: http://127.0.0.1:8055
              auth: { token: abc }
            subscriptions:
              - collection: articles
            sinks:
              - { name: out, type: ndjson }
            """
        let environment = [
            "DIRECTUS_BRIDGE__DIRECTUS__URL": "https://cms.example.com",
            "DIRECTUS_BRIDGE__SUBSCRIPTIONS__0__SNAPSHOT": "true",
            "DIRECTUS_BRIDGE__LOG__LEVEL": "debug",
        ]
        let config = try ConfigLoader.parse(
            text: yaml,
            path: "bridge.yaml",
            environment: environment,
            sinkTypes: SinkCatalog.configTypes
        ).get()
        #expect(config.directus.url.description == "https://cms.example.com")
        #expect(config.subscriptions[0].snapshot == true)
        #expect(config.log.level == .debug)
        #expect(config.directus.auth.credentials == .token("abc"))
    }

    /// A value a variable replaces is never read, so its undefined `${NAME}` is no error: a container that sets the
    /// token with DIRECTUS_BRIDGE__DIRECTUS__AUTH__TOKEN over the example file (`token: ${DIRECTUS_TOKEN}`) starts.
    /// One the variable leaves in place is still reported.
    @Test func anUndefinedVariableInAValueTheEnvironmentReplacesIsNoError() throws {
        let yaml = """
            directus:
              url: ${CMS_URL}
              auth: { token: "${UNSET_TOKEN}" }
            subscriptions:
              - collection: articles
            sinks:
              - { name: out, type: ndjson, path: "${UNSET_PATH}" }
            """
        let environment = [
            "DIRECTUS_BRIDGE__DIRECTUS__AUTH__TOKEN": "from-the-environment",
            "DIRECTUS_BRIDGE__SINKS__0": "{ name: out, type: ndjson }",
            "CMS_URL": "https://cms.example.com",
        ]
        let config = try ConfigLoader.parse(
            text: yaml, path: "bridge.yaml", environment: environment, sinkTypes: SinkCatalog.configTypes
        ).get()
        #expect(config.directus.auth.credentials == .token("from-the-environment"))
        #expect(config.sinks.map(\.name) == ["out"])

        var partly = environment
        partly["DIRECTUS_BRIDGE__SINKS__0"] = nil
        let error = try #require(
            ConfigLoader.parse(
                text: yaml, path: "bridge.yaml", environment: partly, sinkTypes: SinkCatalog.configTypes
            ).failure)
        let lines = error.issues.map(\.description)
        #expect(lines.count == 1 && lines[0].hasPrefix("bridge.yaml:7:"), "\(lines)")
        #expect(lines.first?.contains("undefined variable \"UNSET_PATH\"") == true, "\(lines)")
    }

    @Test func namesSplitAtDoubleUnderscoresAndListPositionsSortAsNumbers() {
        #expect(EnvironmentOverrides.split("DELIVERY__STATE_DIR") == ["delivery", "state_dir"])
        #expect(EnvironmentOverrides.split("SINKS__10__TYPE") == ["sinks", "10", "type"])
        let environment = (0...11).reduce(into: [String: String]()) {
            $0["DIRECTUS_BRIDGE__SINKS__\($1)__TYPE"] = "ndjson"
        }
        #expect(EnvironmentOverrides.overrides(in: environment).map { $0.path[1] } == (0...11).map(String.init))
    }

    static let smallFile =
        "directus:\n  url: http://127.0.0.1:8055\n  auth: { token: abc }\nsubscriptions:\n  - collection: a\n"

    /// The issues of `yaml` under `environment`, one per line (recorded as a failure when it loads).
    func issues(_ yaml: String, _ environment: [String: String]) -> String {
        let result = ConfigLoader.parse(
            text: yaml, path: "bridge.yaml", environment: environment, sinkTypes: SinkCatalog.configTypes)
        guard case .failure(let error) = result else {
            Issue.record("loaded: \(result)")
            return ""
        }
        return error.issues.map(\.description).joined(separator: "\n")
    }

    @Test func aVariableThatCannotApplyIsAnIssueNamingIt() {
        let environment = [
            "DIRECTUS_BRIDGE__SINKS__3__TYPE": "ndjson",
            "DIRECTUS_BRIDGE__DIRECTUS__URL__HOST": "x",
            "DIRECTUS_BRIDGE__DIRECTUS__COLECTION": "articles",
        ]
        let text = issues(Self.smallFile, environment)
        #expect(text.contains("DIRECTUS_BRIDGE__SINKS__3__TYPE:1:1: list position 3 skips position 0"), "\(text)")
        #expect(text.contains("DIRECTUS_BRIDGE__DIRECTUS__URL__HOST:1:1: host is a key"), "\(text)")
        #expect(text.contains(#"unknown key "colection""#), "\(text)")
    }

    /// A value a variable or `--set` brought in that the configuration refuses is reported at the variable or the
    /// `--set`, not at line 1 of a file that never held it (found trying `--set sinks.0.qos=0`: "bridge.yaml:1:1").
    @Test func aRefusedValueIsReportedWhereItCameFrom() {
        let environment = [
            "DIRECTUS_BRIDGE__DELIVERY__MODE": "sometimes",
            "DIRECTUS_BRIDGE__DIRECTUS__COLECTION": "articles",
            "DIRECTUS_BRIDGE__SINKS__1__TYPE": "redis",
        ]
        let text = issues(Self.smallFile + "sinks:\n  - type: ndjson\n", environment)
        #expect(text.contains("DIRECTUS_BRIDGE__DELIVERY__MODE:1:1: delivery.mode"), "\(text)")
        #expect(text.contains(#"DIRECTUS_BRIDGE__DIRECTUS__COLECTION:1:1: unknown key "colection""#), "\(text)")
        #expect(text.contains(#"DIRECTUS_BRIDGE__SINKS__1__TYPE:1:1: missing required key "url""#), "\(text)")
        #expect(!text.contains("bridge.yaml:1:1"), "\(text)")
    }

    /// Found trying hostile settings: `--set a.a.a…=1` with 20,000 keys (or a variable with as many `__`) recursed
    /// once per key and crashed the process (SIGSEGV). A path deeper than any configuration is named and refused.
    @Test func aPathDeeperThanAnyConfigurationIsAnIssueNotACrash() {
        let deep = EnvironmentOverrides.Override(
            variable: "--set a.a", path: Array(repeating: "a", count: 20_000), value: "1")
        let (_, issues) = EnvironmentOverrides.apply([deep], to: nil)
        #expect(issues.count == 1)
        #expect(issues.first?.description.contains("20000 keys deep") == true, "\(issues)")
        let shallow = EnvironmentOverrides.Override(
            variable: "--set log.level", path: ["log", "level"], value: "debug")
        #expect(EnvironmentOverrides.apply([shallow], to: nil).1.isEmpty)
    }

    @Test func withoutVariablesAMissingFileIsStillAnError() {
        let result = ConfigLoader.load(
            path: "bridge.yaml",
            environment: ["DIRECTUS_BRIDGE_LISTEN": "x"],
            sinkTypes: SinkCatalog.configTypes,
            files: NoFiles()
        )
        guard case .failure(let error) = result else {
            Issue.record("loaded without a file or variables")
            return
        }
        #expect(error.issues.first?.description.contains("No such file or directory") == true)
    }
}
