import BridgeSystem
import Foundation

/// A throw-away CA and a server certificate signed by it, written by Tests/tools/certs.py into a directory.
public struct TestCertificates: Sendable {
    /// The CA certificate (PEM): what a client trusts.
    public let ca: String
    /// The server's certificate chain (PEM).
    public let cert: String
    /// The server's private key (PEM).
    public let key: String

    /// `init` on `BlockingExecutor.shared`, for async tests: the generating child process takes seconds on a loaded
    /// machine, which would otherwise hold one of the cooperative pool's two threads.
    public static func make(
        in directory: URL? = nil,
        hosts: [String] = ["127.0.0.1", "localhost"],
        expired: Bool = false
    ) async throws -> TestCertificates {
        try await BlockingExecutor.shared.perform {
            try TestCertificates(in: directory, hosts: hosts, expired: expired)
        }
    }

    /// Writes a fresh set for `hosts` into `directory` (a new temporary one when nil); `expired` makes a server
    /// certificate whose validity ended yesterday.
    public init(in directory: URL? = nil, hosts: [String] = ["127.0.0.1", "localhost"], expired: Bool = false) throws {
        let directory = try directory ?? TestEnvironment.makeTemporaryDirectory(prefix: "certs")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestEnvironment.python)
        process.arguments =
            [TestEnvironment.tool("certs.py"), directory.path] + hosts.flatMap { ["--host", $0] }
            + (expired ? ["--expired"] : [])
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        guard ChildExit.wait(process) == 0 else { throw EmulatorError(message: "certs.py failed") }
        ca = directory.appendingPathComponent("ca.pem").path
        cert = directory.appendingPathComponent("server.pem").path
        key = directory.appendingPathComponent("server.key").path
    }
}
