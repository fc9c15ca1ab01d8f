#if canImport(Glibc)
    import Glibc
#endif
import BridgeConfig
import BridgeSinks
import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

/// The configuration the .deb installs as /etc/directus-bridge/bridge.yaml, read as the unit, an administrator by
/// hand, and the container image give it its environment; and the files around it (the unit, the logrotate snippet,
/// the Dockerfile) kept in step with it, so that none of them names a path the others do not.
@Suite struct PackagedConfigTests {
    static func packaging(_ path: String) -> String {
        let url = TestEnvironment.repositoryRoot.appendingPathComponent("packaging/\(path)")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }

    static let configText = packaging("bridge.yaml")
    static let unit = packaging("directus-bridge.service")
    static let logrotate = packaging("logrotate")
    static let dockerfile = packaging("container/Dockerfile")

    /// The values of `Key=` lines in the unit's text (one entry per line).
    static func unitValues(_ key: String) -> [String] {
        unit.split(separator: "\n").compactMap { line in
            line.hasPrefix("\(key)=") ? String(line.dropFirst(key.count + 1)) : nil
        }
    }

    static func load(
        _ text: String = configText, environment: [String: String], files: [String: String],
        scope: ConfigScope = .everything
    ) -> Result<BridgeConfig, ConfigError> {
        ConfigLoader.parse(
            text: text, path: "bridge.yaml", environment: environment, sinkTypes: SinkCatalog.configTypes,
            files: InMemoryFiles(files), scope: scope)
    }

    /// `LoadCredential=NAME:SOURCE` of the unit.
    static func credential() throws -> (name: String, source: String) {
        let value = try #require(unitValues("LoadCredential").first)
        let parts = value.split(separator: ":", maxSplits: 1).map(String.init)
        try #require(parts.count == 2, "LoadCredential=\(value)")
        return (parts[0], parts[1])
    }

    @Test func underTheUnitTheTokenComesFromTheCredentialsDirectory() throws {
        let (name, _) = try Self.credential()
        let directory = "/run/credentials/directus-bridge.service"
        let config = try Self.load(
            environment: ["CREDENTIALS_DIRECTORY": directory], files: ["\(directory)/\(name)": "unit-token\n"]
        ).get()
        #expect(config.directus.auth == AuthConfig(credentials: .token("unit-token"), mode: .handshake))
        #expect(config.directus.url.description == "http://127.0.0.1:8055")
        #expect(config.delivery.stateDir == "/var/lib/directus-bridge")
        #expect(config.http.listen == ListenAddress(host: "127.0.0.1", port: 9464))
        let events = NDJSONSinkConfig(path: "/var/log/directus-bridge/events.ndjson")
        #expect(config.sinks == [SinkConfig(type: "ndjson", settings: events, name: "events")])
        // scripts/test-package.sh wants `validate` of the packaged file to print exactly "ok".
        #expect(config.warnings.isEmpty)
    }

    /// `check` run by hand as root has no CREDENTIALS_DIRECTORY: it reads the file the unit hands over.
    @Test func byHandTheTokenComesFromTheFileTheUnitHandsOver() throws {
        let (_, source) = try Self.credential()
        let config = try Self.load(environment: [:], files: [source: "root-token\n"]).get()
        #expect(config.directus.auth.credentials == .token("root-token"))
        // As the .deb installs it, the file is empty: the message names the key and the file.
        let error = try #require(Self.load(environment: [:], files: [source: ""]).failure)
        #expect(error.issues.map(\.message) == ["directus.auth.token_file: \"\(source)\" is empty"])
    }

    /// `status`, `dlq` and `resync` run as the service user, who cannot read the root-only token file.
    @Test func offlineCommandsNeedNoTokenFile() throws {
        let config = try Self.load(environment: [:], files: [:], scope: .withoutDirectus).get()
        #expect(config.delivery.stateDir == "/var/lib/directus-bridge")
    }

    /// README "Running under systemd": the token in secrets.env instead, by replacing the token_file line.
    @Test func theTokenCanMoveBackToSecretsEnv() throws {
        let lines = Self.configText.split(separator: "\n", omittingEmptySubsequences: false)
        let index = try #require(lines.firstIndex { $0.trimmingCharacters(in: .whitespaces).hasPrefix("token_file:") })
        var switched = lines.map(String.init)
        switched[index] = String(lines[index].prefix { $0 == " " }) + "token: ${DIRECTUS_TOKEN}"
        let config = try Self.load(
            switched.joined(separator: "\n"), environment: ["DIRECTUS_TOKEN": "env-token"], files: [:]
        ).get()
        #expect(config.directus.auth.credentials == .token("env-token"))
        #expect(config.warnings.isEmpty)
    }

    /// The events file lies in the unit's LogsDirectory= (the service user's, 0700, as the bridge wants an output
    /// directory), the logrotate snippet's pattern takes it, and logrotate works as the unit's user.
    @Test func theEventsFileIsWhereTheUnitAndLogrotateLookAfterIt() throws {
        let (_, source) = try Self.credential()
        let config = try Self.load(environment: [:], files: [source: "t"]).get()
        let path = try #require(config.sinks.first?.settings as? NDJSONSinkConfig).path
        let directory = (path as NSString).deletingLastPathComponent
        #expect(Self.unitValues("LogsDirectory").map { "/var/log/\($0)" } == [directory])
        #expect(Self.unitValues("LogsDirectoryMode") == ["0700"])
        let writable = Self.unitValues("ReadWritePaths").flatMap { $0.split(separator: " ") }
        #expect(writable.contains { $0 == directory })
        let patterns = Self.logrotate.split(separator: "\n").filter { $0.hasSuffix(" {") }.map { $0.dropLast(2) }
        #expect(patterns.count == 1)
        #expect(patterns.allSatisfy { fnmatch(String($0), path, FNM_PATHNAME) == 0 }, "\(patterns) vs \(path)")
        let user = try #require(Self.unitValues("User").first)
        let group = try #require(Self.unitValues("Group").first)
        #expect(Self.logrotate.contains("\n    su \(user) \(group)\n"))
        #expect(Self.logrotate.contains("systemctl reload directus-bridge.service"))
        #expect(Self.unitValues("ExecReload") == ["/bin/kill -HUP $MAINPID"])
    }

    /// The image runs the packaged file with the Dockerfile's ENV: events on stdout, the token from /run/secrets.
    @Test func theContainerImageEnvironmentAppliesToThePackagedConfig() throws {
        var environment: [String: String] = [:]
        for line in Self.dockerfile.split(separator: "\n") where line.hasPrefix("ENV ") {
            let assignment = line.dropFirst(4)
            let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
            try #require(parts.count == 2, "ENV \(assignment): one NAME=value per ENV line")
            environment[parts[0]] = parts[1]
        }
        let (name, _) = try Self.credential()
        let config = try Self.load(environment: environment, files: ["/run/secrets/\(name)": "secret-token"]).get()
        #expect(config.directus.auth.credentials == .token("secret-token"))
        #expect((config.sinks.first?.settings as? NDJSONSinkConfig)?.path == "-")
        #expect(config.http.listen == ListenAddress(host: "0.0.0.0", port: 9464))
    }
}
