import BridgeConfig
import BridgeSinks
import BridgeSystem
import Testing

/// `--set KEY.PATH=VALUE` (docs/configuration.md "Settings on the command line"): values over the file's and the
/// `DIRECTUS_BRIDGE__…` variables', or the whole configuration without a file.
@Suite struct CommandLineSettingTests {
    static let yaml = """
        directus:
          url: ${SETTING_TEST_URL}
          auth: { token: abc }
        subscriptions:
          - collection: articles
        sinks:
          - { name: out, type: ndjson }
        log:
          level: info
        """

    static func load(
        _ settings: [String], environment: [String: String] = [:], files: any ConfigFileSystem = InMemoryFiles()
    ) -> Result<BridgeConfig, ConfigError> {
        ConfigLoader.parse(
            text: yaml, path: "bridge.yaml", environment: environment, settings: settings.compactMap(ConfigSetting.init),
            sinkTypes: SinkCatalog.configTypes, files: files)
    }

    @Test func aSettingWinsOverTheFileAndTheEnvironment() throws {
        let config = try Self.load(
            ["log.level=debug", "directus.url=https://cms.example.com", "sinks.0.path=/data/out.ndjson"],
            environment: ["DIRECTUS_BRIDGE__LOG__LEVEL": "warn", "DIRECTUS_BRIDGE__SINKS__0__PATH": "env.ndjson"]
        ).get()
        #expect(config.log.level == .debug)
        // The file's ${SETTING_TEST_URL} is undefined, but the setting replaced it: never read, no error.
        #expect(config.directus.url.description == "https://cms.example.com")
        #expect((config.sinks[0].settings as? NDJSONSinkConfig)?.path == "/data/out.ndjson")
        #expect(config.directus.auth.credentials == .token("abc"))
    }

    /// List entries may be given in any order (a list fills from position 0); of two for one key the later wins.
    @Test func listPositionsInAnyOrderAndTheLaterOfTwoWins() throws {
        let config = try Self.load([
            "directus.url=http://127.0.0.1:8055",
            "sinks.2.name=c", "sinks.2.type=ndjson", "sinks.2.path=c.ndjson",
            "sinks.1.name=b", "sinks.1.type=ndjson", "sinks.1.path=b.ndjson",
            "log.level=warn", "log.level=error",
            "subscriptions.0.snapshot=true",
        ]).get()
        #expect(config.sinks.map(\.name) == ["out", "b", "c"])
        #expect(config.log.level == .error)
        #expect(config.subscriptions[0].snapshot)
    }

    /// With no file, the settings alone are the configuration (as the variables are).
    @Test func settingsAloneAreAWholeConfiguration() throws {
        let settings = [
            "directus.url=https://cms.example.com", "directus.auth.token=t0ken", "subscriptions.0.collection=articles",
            "sinks.0.name=out", "sinks.0.type=ndjson", "delivery.mode=live",
        ]
        let config = try ConfigLoader.load(
            path: "missing.yaml", environment: [:], settings: settings.compactMap(ConfigSetting.init),
            sinkTypes: SinkCatalog.configTypes, files: InMemoryFiles()
        ).get()
        #expect(config.directus.url.description == "https://cms.example.com")
        #expect(config.subscriptions.map(\.uid) == ["articles"])
        #expect(config.sinks.map(\.name) == ["out"])
        let none = ConfigLoader.load(
            path: "missing.yaml", environment: [:], sinkTypes: SinkCatalog.configTypes, files: InMemoryFiles())
        #expect(none.failure?.issues.first?.message.contains("No such file or directory") == true)
    }

    @Test func aSettingThatCannotApplyIsAnIssueNamingIt() throws {
        let error = try #require(
            Self.load(["directus.url=http://127.0.0.1:8055", "sinks.3.type=ndjson", "log.level.x=1"]).failure)
        let text = error.issues.map(\.description).joined(separator: "\n")
        #expect(text.contains("--set sinks.3.type:1:1: list position 3 skips position 1"), "\(text)")
        #expect(text.contains("--set log.level.x:1:1: x is a key, but the value there is"), "\(text)")
    }
}
