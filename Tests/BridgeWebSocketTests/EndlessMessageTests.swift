import BridgeSystem
import Synchronization
import Testing

@testable import BridgeTLS
@testable import BridgeWebSocket

/// A peer that never lets the socket run dry inside one endless data message (docs/RELIABILITY.md, "Wire numbers and
/// traps: audit"): the receive still returns at its deadline, so the Directus driver runs its dead-peer check and
/// sees a stop. Before, the receive loop looked at its deadline only when a read found nothing waiting: with bytes
/// always there and no message completing, it read on for as long as the peer sent (this test hung: time limit).
@Suite(.timeLimit(.minutes(1)))
struct EndlessMessageTests {
    /// A stream that always has bytes: a text frame announcing 2^62 bytes (or a frame without FIN followed by
    /// continuation frames), then its payload, forever. Writes are taken and dropped.
    final class EndlessStream: ByteStream {
        private let pending = Mutex<[UInt8]>([])
        private let fragments: Bool
        let reads = Atomic<Int>(0)

        init(fragments: Bool) {
            self.fragments = fragments
            // FIN + text with a 64-bit length of 2^62, or text without FIN and a 1-byte payload.
            let head: [UInt8] = fragments ? [0x01, 0x01, 0x78] : [0x81, 0x7F, 0x40, 0, 0, 0, 0, 0, 0, 0]
            pending.withLock { $0 = head }
        }

        func read(into buffer: UnsafeMutableRawBufferPointer, deadline: ContinuousClock.Instant) throws
            -> StreamReadResult
        {
            reads.add(1, ordering: .relaxed)
            return pending.withLock { pending in
                // Continuation frames without FIN of 125 bytes each, or plain payload.
                let more: [UInt8] =
                    fragments
                    ? [0x00, 0x7D] + [UInt8](repeating: 0x78, count: 125) : [UInt8](repeating: 0x78, count: 4096)
                while pending.count < buffer.count { pending += more }
                let count = buffer.count
                buffer.copyBytes(from: pending[..<count])
                pending.removeFirst(count)
                return .read(count)
            }
        }

        func write(_ bytes: UnsafeRawBufferPointer, deadline: ContinuousClock.Instant) throws {}
        func shutdown() {}
        var remoteAddress: SocketAddress { SocketAddress(ipAddress: "127.0.0.1", port: 1)! }
    }

    @Test(arguments: [false, true])
    func aReceiveReturnsAtItsDeadlineWhileBytesOfOneEndlessMessageKeepComing(fragments: Bool) throws {
        let stream = EndlessStream(fragments: fragments)
        let connection = WebSocketConnection(
            url: try WebSocketURL("ws://127.0.0.1:1/websocket"),
            options: WebSocketOptions(maxMessageSize: 1 << 20, skipsOversizedMessages: true),
            stream: stream, leftover: [], logger: .silent)
        for _ in 0..<3 {
            let lent = try connection.receive(timeout: .milliseconds(100)) { _ in true }
            #expect(lent == 0, "no message completes")
        }
        #expect(stream.reads.load(ordering: .relaxed) > 3, "it read while the time lasted")
        #expect(connection.skippedMessages <= 1)
        // A zero timeout still reads what is there (one read, at least), and returns.
        let before = stream.reads.load(ordering: .relaxed)
        #expect(try connection.receive(timeout: .zero) { _ in true } == 0)
        #expect(stream.reads.load(ordering: .relaxed) > before)
    }
}
