import BridgeConfig
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

/// Start-up warnings (docs/RELIABILITY.md, "Files and transport").
@Suite struct StartupWarningsTests {
    private func config(
        url: String, auth: String = "token: t", sinks: String = "  - type: ndjson", stateDir: String = ""
    ) throws -> BridgeConfig {
        let text = """
            directus:
              url: \(url)
              auth:
                \(auth)
            subscriptions:
              - collection: articles
            delivery:
              state_dir: \(stateDir.isEmpty ? "/nonexistent-bridge-state" : stateDir)
            sinks:
            \(sinks)
            """
        let parsed = ConfigLoader.parse(
            text: text, path: "test.yaml", environment: [:], sinkTypes: SinkCatalog.configTypes)
        switch parsed {
        case .success(let config): return config
        case .failure(let error): throw ConfigFixture.Failed(issues: error.description)
        }
    }

    @Test(arguments: [
        ("http://directus.example.com", "http://directus.example.com:80"),
        ("http://10.0.0.5:8055/cms", "http://10.0.0.5:8055"),
    ])
    func credentialsOverPlainHTTPToAnotherHostWarn(url: String, shown: String) throws {
        let warnings = StartupWarnings.transport(try config(url: url))
        #expect(warnings.count == 1)
        #expect(warnings.first?.message.contains("unencrypted") == true)
        #expect(warnings.first?.metadata["directus.url"]?.logValue.text == shown)  // README.md, "How URLs are shown"
        let login = try config(url: url, auth: "email: a@b.c\n    password: pw")
        #expect(StartupWarnings.transport(login).count == 1)
    }

    @Test(arguments: [
        "https://directus.example.com", "http://127.0.0.1:8055", "http://127.9.9.9", "http://[::1]:8055",
        "http://localhost:8055",
    ])
    func tlsOrLoopbackDoesNotWarn(url: String) throws {
        #expect(StartupWarnings.transport(try config(url: url)).isEmpty)
    }

    @Test func publicAccessSendsNoCredentials() throws {
        let anonymous = try config(url: "http://directus.example.com", auth: "mode: public")
        #expect(StartupWarnings.transport(anonymous).isEmpty)
    }

    @Test func webhookCredentialsOverPlainHTTPWarn() throws {
        let sinks = """
              - name: first
                type: webhook
                url: http://hooks.example.com/a
                headers:
                  Authorization: Bearer x
                  X-Source: bridge
              - type: webhook
                url: http://hooks.example.com/b?token=abc
              - type: webhook
                url: http://hooks.example.com/c
                headers:
                  X-Source: bridge
              - type: webhook
                url: https://hooks.example.com/d?token=abc
              - type: webhook
                url: http://127.0.0.1:9000/e?token=abc
            """
        let configured = try config(url: "https://d.example.com", sinks: sinks)
        let warnings = StartupWarnings.transport(configured)
        // Each sink as every log line names it: its name, else its positional id.
        let unnamed = SinkCatalog.identities(of: configured.sinks)[1]
        #expect(unnamed.hasPrefix("1-hooks.example.com:80-"))
        #expect(warnings.map { $0.metadata["sink"]?.logValue.text } == ["first", unnamed])
        #expect(warnings.first?.metadata["headers"]?.logValue.text == "Authorization")
        #expect(warnings.allSatisfy { !($0.metadata["directus.url"]?.logValue.text ?? "").contains("token=") })
    }

    @Test func looseStateAndOutputFilesWarnAndPrivateOnesDoNot() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "startup-warnings")
        let state = directory.appendingPathComponent("state").path
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: state)
        let output = directory.appendingPathComponent("out.ndjson").path
        #expect(FileManager.default.createFile(atPath: output, contents: nil))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: output)
        let sinks = "  - type: ndjson\n    path: \(output)"
        let loose = StartupWarnings.looseFileModes(try config(url: "https://d", sinks: sinks, stateDir: state))
        #expect(loose.map { $0.metadata["path"]?.logValue.text } == [state, output])
        #expect(loose.map { $0.metadata["mode"]?.logValue.text } == ["0755", "0644"])

        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: state)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: output)
        #expect(StartupWarnings.looseFileModes(try config(url: "https://d", sinks: sinks, stateDir: state)).isEmpty)
    }
}
