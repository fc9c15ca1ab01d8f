import Foundation

/// A TLS front (Tests/tools/http_peers/tls_front.py) before a local port: https/wss in front of the emulator or a
/// webhook receiver, with a certificate from `TestCertificates`, the way a reverse proxy sits before them.
public final class TLSFront: @unchecked Sendable {
    // @unchecked: `server` is immutable after init and PythonServer is thread-safe.
    /// The process.
    public let server: PythonServer
    /// The TLS port.
    public var port: Int { server.port }

    /// Starts a front for `127.0.0.1:<target>` serving `certificates`' server certificate.
    public init(target: Int, certificates: TestCertificates) throws {
        server = try PythonServer(
            script: "http_peers/tls_front.py",
            arguments: ["--target", "\(target)", "--tls-cert", certificates.cert, "--tls-key", certificates.key])
    }

    /// Stops the front.
    public func stop() { server.stop() }

    /// `https://127.0.0.1:<port><path>`.
    public func url(_ path: String = "") -> String { "https://127.0.0.1:\(port)\(path)" }

    /// Its counters: `accepted` TCP connections, `handshake_failures` (clients that refused the certificate),
    /// `piped` connections.
    public func stats() throws -> [String: Int] {
        // Printed right after READY, so it reaches the captured log a moment after start-up.
        var statsPort: Int?
        let deadline = ContinuousClock.now + .seconds(TestEnvironment.patient(10))
        while statsPort == nil && ContinuousClock.now < deadline {
            statsPort = server.log.split(separator: "\n").first { $0.hasPrefix("STATS ") }
                .flatMap { Int($0.dropFirst("STATS ".count)) }
            if statsPort == nil { usleep(20_000) }
        }
        guard let statsPort else { throw EmulatorError(message: "the TLS front printed no STATS line: \(server.log)") }
        return try HTTPFetch.get("http://127.0.0.1:\(statsPort)/_front/stats").json as? [String: Int] ?? [:]
    }
}
