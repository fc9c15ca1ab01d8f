import BridgeNATS
import BridgeTestSupport
import Foundation
import Testing

/// Issue 23, item 9: a NATS connection over TLS checks that the server's certificate names the host in `servers`
/// (`natsOptions_SetExpectedHostname`), not only that a trusted CA signed it, and a refused certificate is reported
/// as a TLS error, not as refused credentials.
@Suite(.serialized) struct NATSTLSTests {
    /// A nats-server that requires TLS with a certificate for `hosts`, signed by the returned CA.
    private func tlsServer(hosts: [String]) async throws -> (NATSServer, TestCertificates) {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "nats-tls")
        let certificates = try await TestCertificates.make(in: directory.appendingPathComponent("certs"), hosts: hosts)
        let tls = "tls { cert_file: \"\(certificates.cert)\", key_file: \"\(certificates.key)\" }"
        let server = try NATSServer(name: "tls", in: directory, authorization: tls)
        try await server.start()
        return (server, certificates)
    }

    @Test func aCertificateForTheHostConnects() async throws {
        let (server, certificates) = try await tlsServer(hosts: ["localhost"])
        let settings = NATSSettings(servers: ["tls://localhost:\(server.port)"], caFile: certificates.ca)
        let connection = try await NATSConnection.connect(settings: settings, logger: .silent)
        await connection.close()
    }

    @Test func aTrustedCertificateForAnotherHostIsRefusedAsATLSError() async throws {
        let (server, certificates) = try await tlsServer(hosts: ["other.example"])
        let settings = NATSSettings(servers: ["tls://localhost:\(server.port)"], caFile: certificates.ca)
        do {
            let connection = try await NATSConnection.connect(settings: settings, logger: .silent)
            await connection.close()
            Issue.record("a certificate for other.example was accepted for localhost")
        } catch let error as NATSError {
            #expect(error.isTLSFailure, "\(error)")
            #expect("\(error)".contains("tls"), "\(error)")
            #expect(!"\(error)".contains("credentials"), "\(error)")
        }
    }

    @Test(arguments: [
        (["tls://nats.example.com:4222", "tls://nats.example.com:4223"], "nats.example.com"),
        (["nats://a@nats.example.com:4222"], "nats.example.com"),
        (["tls://[::1]:4222"], nil),
        (["tls://127.0.0.1:4222"], nil),
        (["tls://a.example.com:4222", "tls://b.example.com:4222"], nil),
    ] as [([String], String?)])
    func theExpectedHostNameIsTheServersOneName(servers: [String], expected: String?) {
        #expect(NATSSettings(servers: servers).expectedHostname == expected)
    }
}
