import BridgeTestSupport
import Foundation
import Testing

/// docs/RELIABILITY.md "Files and transport", with the real binary: private state and output files whatever the
/// umask, TLS 1.2 at least for REST and webhooks, and a warning for credentials sent in the clear.
@Suite(.serialized) struct FilesAndTransportTests {
    private func mode(_ url: URL) -> Int? {
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes?[.posixPermissions] as? Int).map { $0 & 0o777 }
    }

    /// A permissive umask would leave files world-readable, a strict one (0277: owner read-only) would make the
    /// state directory unusable: either way the bridge's files come out 0700/0600.
    @Test(arguments: ["0000", "0277"])
    func stateAndOutputFilesArePrivateWhateverTheUmask(umask: String) throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        let sinks = webhookSink(receiver.hookURL()) + "  - type: ndjson\n    path: out.ndjson\n"
        let config = webhookConfig(url: emulator.url, sinks: sinks, mode: "activity")
            .replacingOccurrences(of: "state_dir: ./state", with: "state_dir: ./state/inner")
        let bridge = try BridgeProcess.run(config: config, umask: umask)
        // Connected comes after the activity cursor was placed at the newest id: a change made now is delivered.
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.create("articles", ["title": "private"])
        #expect(bridge.waitUntil { _ in ((try? receiver.delivered().count) ?? 0) >= 1 }, "\(bridge.stderr)")
        let directory = bridge.directory
        let state = directory.appendingPathComponent("state")
        #expect(mode(state) == 0o700)
        #expect(mode(state.appendingPathComponent("inner")) == 0o700)
        for file in ["cursor.db", "cursor.db-wal", "webhooks.db", "webhooks.db-wal"] {
            #expect(mode(state.appendingPathComponent("inner/\(file)")) == 0o600, "\(file)")
        }
        #expect(mode(directory.appendingPathComponent("out.ndjson")) == 0o600)
        #expect(!bridge.stderr.contains("unencrypted"))  // the emulator is on 127.0.0.1
        #expect(!bridge.stderr.contains("accessible to other users"))
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    @Test func existingFilesKeepTheirModeAndAreWarnedAbout() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "bridge-modes")
        let output = directory.appendingPathComponent("out.ndjson")
        #expect(FileManager.default.createFile(atPath: output.path, contents: nil))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: output.path)
        let config = liveConfig(url: emulator.url).replacingOccurrences(of: "path: \"-\"", with: "path: out.ndjson")
        let bridge = try BridgeProcess.run(config: config, in: directory)
        #expect(bridge.waitForLog("accessible to other users"), "\(bridge.stderr)")
        #expect(bridge.stderr.contains("mode=0644"), "\(bridge.stderr)")
        #expect(mode(output) == 0o644)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    @Test func credentialsOverPlainHTTPToAnotherHostAreWarnedAbout() throws {
        // Nothing answers there (the test network is loopback only): the warning comes before any connection.
        let bridge = try BridgeProcess.run(config: liveConfig(url: "http://directus.invalid:8055"))
        #expect(bridge.waitForLog("Directus credentials are sent unencrypted"), "\(bridge.stderr)")
        #expect(bridge.stderr.contains("directus.invalid"))
        #expect(!bridge.stderr.contains("admin-static-token"))
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    /// With an OpenSSL configuration that allows TLS 1.0/1.1 (as some systems have), a server that offers only
    /// those is still refused: the REST client asks for TLS 1.2 at least. The same server offering TLS 1.2 is
    /// reached (its answer to /server/ping is a 404: it is not Directus), so nothing else explains the failure.
    @Test func aServerOfferingOnlyTLS11IsRefused() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "bridge-tls-min")
        let certificates = try TestCertificates(in: directory.appendingPathComponent("certs"))
        let openSSLConfig = directory.appendingPathComponent("openssl-legacy.cnf")
        try """
        openssl_conf = openssl_init
        [openssl_init]
        ssl_conf = ssl_sect
        [ssl_sect]
        system_default = system_default_sect
        [system_default_sect]
        MinProtocol = TLSv1
        CipherString = DEFAULT:@SECLEVEL=0
        """.write(to: openSSLConfig, atomically: true, encoding: .utf8)
        func serverLine(_ tlsArguments: [String]) throws -> String {
            let server = try PythonServer(
                script: "http_peers/http_peer.py",
                arguments: ["--tls-cert", certificates.cert, "--tls-key", certificates.key] + tlsArguments
            )
            defer { server.stop() }
            let yaml = """
                directus:
                  url: https://127.0.0.1:\(server.port)
                  auth:
                    token: admin-static-token
                  tls:
                    ca_file: \(certificates.ca)
                subscriptions:
                  - collection: articles
                sinks:
                  - type: ndjson
                """
            try yaml.write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
            let check = try BridgeProcess(
                arguments: ["check", "--config", "bridge.yaml"], directory: directory,
                environment: ["OPENSSL_CONF": openSSLConfig.path]
            )
            #expect(check.waitForExit() == 1)
            return check.lines.first { $0.contains("server:") } ?? check.stderr
        }
        let modern = try serverLine([])
        #expect(modern.contains("answered HTTP 404"), "\(modern)")
        let legacy = try serverLine(["--tls-max", "1.1"])
        #expect(legacy.hasPrefix("FAIL server:"), "\(legacy)")
        #expect(!legacy.contains("answered HTTP"), "\(legacy)")
    }
}
