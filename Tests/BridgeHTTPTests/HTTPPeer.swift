import BridgeHTTP
import BridgeTestSupport
import Foundation
import Testing

/// The Python peer of Tests/tools/http_peers/http_peer.py, with helpers to read its counters.
final class HTTPPeer: Sendable {
    let server: PythonServer
    let baseURL: String

    /// Starts the peer (plain HTTP, or HTTPS with `tls`), off the cooperative pool.
    init(tls: TestCertificates? = nil) async throws {
        var arguments: [String] = []
        if let tls { arguments += ["--tls-cert", tls.cert, "--tls-key", tls.key] }
        server = try await PythonServer.start(script: "http_peers/http_peer.py", arguments: arguments)
        baseURL = "\(tls == nil ? "http" : "https")://127.0.0.1:\(server.port)"
    }

    func url(_ path: String) -> String { baseURL + path }

    /// The peer's counters, read over a fresh connection that the counters do not include.
    func stats() async throws -> Stats {
        let client = HTTPClient(options: HTTPClientOptions(insecureSkipVerify: true), poolSize: 0)
        let response = try await client.send(HTTPRequest(url: url("/stats")))
        return try JSONDecoder().decode(Stats.self, from: Data(response.body))
    }

    /// Zeroes the counters.
    func reset() async throws {
        let client = HTTPClient(options: HTTPClientOptions(insecureSkipVerify: true), poolSize: 0)
        _ = try await client.send(HTTPRequest(url: url("/reset")))
    }

    struct Stats: Decodable {
        var connections: Int
        var requests: Int
        var max_concurrency: Int
        var in_flight: Int
    }

    /// What /echo saw.
    struct Echo: Decodable {
        var method: String
        var path: String
        var query: String
        var headers: [[String]]
        var body_hex: String

        func header(_ name: String) -> String? {
            headers.first { $0[0].lowercased() == name.lowercased() }?[1]
        }

        var body: [UInt8] {
            var bytes: [UInt8] = []
            var index = body_hex.startIndex
            while index < body_hex.endIndex {
                let next = body_hex.index(index, offsetBy: 2)
                bytes.append(UInt8(body_hex[index..<next], radix: 16)!)
                index = next
            }
            return bytes
        }
    }

    static func decodeEcho(_ response: HTTPResponse) throws -> Echo {
        try JSONDecoder().decode(Echo.self, from: Data(response.body))
    }
}

/// A 127.0.0.1 port nothing listens on (bound, then closed, so the kernel refuses connections to it).
func closedPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    close(fd)
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Runs `body` and returns the `HTTPClientError` it throws (failing the test if it throws anything else).
func expectHTTPError(_ body: () async throws -> HTTPResponse) async -> HTTPClientError? {
    do {
        let response = try await body()
        Issue.record("expected an error, got status \(response.status)")
        return nil
    } catch let error as HTTPClientError {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}

/// Polls `condition` every 20 ms until it holds or `attempts` polls have passed (then the caller's
/// expectation reports the failure).
func waitUntil(attempts: Int = 250, _ condition: () async throws -> Bool) async throws {
    for _ in 0..<attempts {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
}
