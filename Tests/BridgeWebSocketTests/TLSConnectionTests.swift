import BridgeSystem
import BridgeTLS
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeWebSocket

extension TestCertificates {
    /// A `websockets` echo server over TLS with this certificate.
    func startServer() async throws -> PythonServer {
        try await PythonServer.start(script: "ws_peers/peer.py", arguments: ["echo", "--cert", cert, "--key", key])
    }
}

/// wss:// against a local TLS server: verification passes with the right CA and host name; a wrong host name,
/// an unknown CA and an expired certificate each fail with a clear, non-retriable error.
@Suite(.serialized) struct TLSConnectionTests {
    private func tlsError(_ url: String, _ tls: TLSConfiguration) async -> WebSocketError? {
        do {
            let connection = try await connect(url, options: WebSocketOptions(tls: tls))
            connection.abort()
            return nil
        } catch {
            return error as? WebSocketError
        }
    }

    @Test func verifiesTheServerByNameAndByIPAddress() async throws {
        let certificates = try await TestCertificates.make(hosts: ["localhost", "127.0.0.1"])
        let server = try await certificates.startServer()
        let tls = TLSConfiguration(caFile: certificates.ca)
        for host in ["localhost", "127.0.0.1"] {
            let connection = try await connect("wss://\(host):\(server.port)/", options: WebSocketOptions(tls: tls))
            try await connection.send(text: "secure \(host)")
            #expect(try await connection.next() == .text(Array("secure \(host)".utf8)))
            #expect(await connection.close().code == 1000)
        }
    }

    @Test func largeMessagesAndConcurrentWritersOverTLS() async throws {
        let certificates = try await TestCertificates.make(hosts: ["localhost"])
        let server = try await certificates.startServer()
        let connection = try await connect(
            "wss://localhost:\(server.port)/",
            options: WebSocketOptions(tls: TLSConfiguration(caFile: certificates.ca))
        )
        let big = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try await connection.send(binary: big)
        #expect(try await connection.next() == .binary(big))

        let count = 600
        async let reader: Int = blocking {
            var received = 0
            while received < count {
                let batch = try connection.receiveBatch(timeout: .seconds(5) * TestEnvironment.patience)
                if batch.isEmpty { break }
                received += batch.count
            }
            return received
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<3 {
                group.addTask {
                    try await blocking {
                        for index in 0..<(count / 3) {
                            try connection.send(text: sampleText(bytes: 300 + writer + index))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await reader == count)
        await connection.close()
    }

    @Test func aWrongHostNameIsRejected() async throws {
        let certificates = try await TestCertificates.make(hosts: ["other.example"])
        let server = try await certificates.startServer()
        let error = try #require(
            await tlsError("wss://localhost:\(server.port)/", TLSConfiguration(caFile: certificates.ca))
        )
        #expect(error.kind == .tls)
        #expect(error.isCertificateProblem)
        #expect(!error.isRetriable)
        #expect(error.tlsError?.verifyReason == "hostname mismatch")
        #expect(error.description.contains("hostname mismatch"))
    }

    @Test func anUnknownCAIsRejectedUnlessVerificationIsOff() async throws {
        let certificates = try await TestCertificates.make(hosts: ["localhost"])
        let server = try await certificates.startServer()
        let error = try #require(await tlsError("wss://localhost:\(server.port)/", TLSConfiguration()))
        #expect(error.isCertificateProblem)
        #expect(error.tlsError?.verifyReason == "unable to get local issuer certificate")
        #expect(!error.isRetriable)

        let insecure = try await connect(
            "wss://localhost:\(server.port)/",
            options: WebSocketOptions(tls: TLSConfiguration(insecureSkipVerify: true))
        )
        try await insecure.send(text: "trust me")
        #expect(try await insecure.next().text == "trust me")
        await insecure.close()
    }

    @Test func anExpiredCertificateIsRejected() async throws {
        let certificates = try await TestCertificates.make(hosts: ["localhost"], expired: true)
        let server = try await certificates.startServer()
        let error = try #require(
            await tlsError("wss://localhost:\(server.port)/", TLSConfiguration(caFile: certificates.ca))
        )
        #expect(error.isCertificateProblem)
        #expect(error.tlsError?.verifyReason == "certificate has expired")
        #expect(error.message.contains("certificate has expired"))
    }

    @Test func aPlainServerIsNotMistakenForTLS() async throws {
        let server = try await Peers.echo()
        let error = try #require(await tlsError("wss://127.0.0.1:\(server.port)/", TLSConfiguration()))
        #expect(error.kind == .tls)
        #expect(!error.isCertificateProblem)
        #expect(error.isRetriable)
    }
}
