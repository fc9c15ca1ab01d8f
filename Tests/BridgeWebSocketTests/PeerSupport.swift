import BridgeSystem
import BridgeTestSupport
import Foundation

@testable import BridgeWebSocket

/// What a peer did not do in time (`WebSocketConnection.next`).
struct PeerStartError: Error, CustomStringConvertible {
    let description: String
}

/// The Python peers of `Tests/tools/ws_peers/peer.py`, started once per test process by the first test that asks
/// (`SharedServer`) and shared by the tests (each test uses its own connections). The peers exit on their own when
/// this process ends.
enum Peers {
    private static let echoServer = shared(["echo"])
    private static let echoServerIPv6 = shared(["echo", "--host", "::1"])
    private static let rawServer = shared(["raw"])

    /// The `websockets` library echo server on 127.0.0.1.
    static func echo() async throws -> PythonServer { try await echoServer.get() }
    /// The same on ::1.
    static func echoIPv6() async throws -> PythonServer { try await echoServerIPv6.get() }
    /// The hand-written peer that breaks the protocol on request.
    static func raw() async throws -> PythonServer { try await rawServer.get() }

    private static func shared(_ arguments: [String]) -> SharedServer<PythonServer> {
        SharedServer { try PythonServer(script: "ws_peers/peer.py", arguments: arguments) }
    }
}

/// Connects without logging.
func connect(_ url: String, options: WebSocketOptions = WebSocketOptions()) async throws -> WebSocketConnection {
    try await WebSocketConnection.connect(to: WebSocketURL(url), options: options, logger: .silent)
}

/// The error a connection attempt ends with; nil when it connects (the connection is then aborted).
func connectError(_ url: String, options: WebSocketOptions = WebSocketOptions()) async -> WebSocketError? {
    do {
        let connection = try await connect(url, options: options)
        connection.abort()
        return nil
    } catch {
        return error as? WebSocketError
    }
}

/// A fresh tag for the peer's `RESULT` lines.
func makeID() -> String { String(UUID().uuidString.prefix(8)) }

extension WebSocketConnection {
    /// The next message, failing when none arrives within `timeout` (stretched by `TestEnvironment.patience`).
    func next(timeout: Duration = .seconds(5)) async throws -> WebSocketMessage {
        guard let message = try await receive(timeout: timeout * TestEnvironment.patience) else {
            throw PeerStartError(description: "no message within \(timeout)")
        }
        return message
    }

    /// Reads until the connection fails; returns the error (nil when nothing ends it within `timeout`, stretched by
    /// `TestEnvironment.patience`).
    func nextError(timeout: Duration = .seconds(5)) async -> WebSocketError? {
        let deadline = ContinuousClock.now + timeout * TestEnvironment.patience
        while ContinuousClock.now < deadline {
            do {
                _ = try await receive(timeout: .milliseconds(200))
            } catch {
                return error as? WebSocketError
            }
        }
        return nil
    }
}

extension PythonServer {
    /// Waits for the line `RESULT <id> …` and returns what follows the id.
    func result(_ id: String, timeout: Duration = .seconds(60)) async -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            for line in log.split(separator: "\n") where line.hasPrefix("RESULT \(id) ") {
                return String(line.dropFirst("RESULT \(id) ".count))
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }
}

/// Lowercase hex, as the raw peer's `hex=` parameter expects.
func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}

/// Runs blocking work off the cooperative pool.
func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await BlockingExecutor.shared.perform(body)
}

/// Text of `count` bytes with multi-byte characters sprinkled in (exact byte length).
func sampleText(bytes count: Int) -> String {
    var text = ""
    var length = 0
    var index = 0
    while length < count {
        let piece = index % 10 == 9 && count - length >= 2 ? "é" : String(UnicodeScalar(UInt8(97 + index % 26)))
        text += piece
        length += piece.utf8.count
        index += 1
    }
    return text
}
