import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeDirectus
import BridgeActivity
import BridgeSinks
import BridgeTestSupport
import Foundation
import Testing

@Suite struct LoaderFileTests {
    @Test func missingFileIsAnIssueAtTheStartNamingThePathAsGiven() {
        let result = ConfigLoader.load(path: "no/such/bridge.yaml", environment: [:], sinkTypes: SinkCatalog.configTypes)
        #expect(
            result.failure?.issues.map(\.description) == [
                "no/such/bridge.yaml:1:1: cannot read the configuration file: No such file or directory"
            ]
        )
    }

    @Test func directoryIsNotAConfiguration() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "config-dir")
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = ConfigLoader.load(path: directory.path, environment: [:], sinkTypes: SinkCatalog.configTypes)
        #expect(
            result.failure?.issues.map(\.description) == [
                "\(directory.path):1:1: cannot read the configuration file: is a directory"
            ]
        )
    }

    @Test func readsTheFileAndItsSecretFilesFromDisk() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "config-files")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenPath = directory.appendingPathComponent("token").path
        let secretPath = directory.appendingPathComponent("hook-secret").path
        try "disk-token\n".write(toFile: tokenPath, atomically: true, encoding: .utf8)
        try "whsec_AAAAAAAA\n\n".write(toFile: secretPath, atomically: true, encoding: .utf8)
        let yaml = minimalYAML.replacingOnce("token: secret-token", with: "token_file: ${SECRETS}/token")
            .replacingOnce(
                "  - type: ndjson\n",
                with: "  - type: webhook\n    url: http://h\n    secret_file: \(secretPath)\n"
            )
        let configPath = directory.appendingPathComponent("bridge.yaml").path
        try yaml.write(toFile: configPath, atomically: true, encoding: .utf8)

        let config = try ConfigLoader.load(path: configPath, environment: ["SECRETS": directory.path], sinkTypes: SinkCatalog.configTypes).get()
        #expect(config.directus.auth.credentials == .token("disk-token"))
        #expect(config.allSecrets.contains("whsec_AAAAAAAA"))
    }

    @Test func secretFileThatIsNotUTF8IsReported() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "config-binary")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenPath = directory.appendingPathComponent("token").path
        try Data([0xFF, 0xFE, 0x00]).write(to: URL(fileURLWithPath: tokenPath))
        let yaml = minimalYAML.replacingOnce("token: secret-token", with: "token_file: \(tokenPath)")
        let result = ConfigLoader.parse(text: yaml, path: "bridge.yaml", environment: [:], sinkTypes: SinkCatalog.configTypes)
        #expect(
            result.failure?.issues.map(\.description) == [
                "bridge.yaml:4:17: directus.auth.token_file: \"\(tokenPath)\" is not UTF-8 text"
            ]
        )
    }

    @Test func parseIsHermetic() {
        // The process environment is never read: HOME is set for every test process, yet undefined here.
        let yaml = minimalYAML.replacingOnce("secret-token", with: "${HOME}")
        #expect(issues(yaml).first?.contains("undefined variable \"HOME\"") == true)
    }
}
