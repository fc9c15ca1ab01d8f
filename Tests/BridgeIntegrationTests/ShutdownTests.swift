import BridgeTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The two phases of a shutdown end the process even when a sink cannot be interrupted.
@Suite(.serialized) struct ShutdownTests {
    /// An NDJSON sink writes into a pipe whose reader stopped reading: the write blocks in the kernel, and nothing
    /// can interrupt it. SIGTERM must still end the process soon after `shutdown_timeout` (the forced phase stops
    /// waiting for the blocked sink), and with exit 0: in live mode there is no state to save.
    @Test func aSinkBlockedInAWriteDoesNotHoldTheShutdown() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "bridge-fifo")
        let fifo = directory.appendingPathComponent("stuck.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        // A reader that never reads: the bridge can open the pipe for writing, and blocks once the pipe is full.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { close(reader) }
        let config = liveConfig(url: emulator.url, rest: "")
            .replacingOccurrences(of: "path: \"-\"", with: "path: \"\(fifo)\"")
            .replacingOccurrences(of: "shutdown_timeout: 5s", with: "shutdown_timeout: 2s")
        let bridge = try BridgeProcess.run(config: config, in: directory)
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        let title = String(repeating: "x", count: 16_384)
        for index in 0..<16 { try emulator.create("articles", ["title": "\(index) \(title)"]) }  // > 64 KiB
        // The sink is stuck once a write has not come back for a while: the queue holds what follows.
        #expect(bridge.waitUntil(timeout: 20) { _ in Self.pipeIsFull(reader) }, "\(bridge.stderr)")
        let signalled = ContinuousClock.now
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit(timeout: 20) == 0, "\(bridge.stderr)")
        // The 2 s shutdown timeout, then a margin stretched by the patience factor like every other wait.
        #expect(ContinuousClock.now - signalled < .seconds(2 + TestEnvironment.patient(4)), "\(bridge.stderr)")
        #expect(bridge.stderr.contains("graceful shutdown took too long"), "\(bridge.stderr)")
    }

    /// The graceful phase drains the queue into the sinks: events held behind a sink that is slow when SIGTERM
    /// arrives are still written before the process exits.
    @Test func theQueueIsDrainedIntoTheSinksBeforeExit() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "bridge-drain")
        let fifo = directory.appendingPathComponent("slow.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { close(reader) }
        let config = liveConfig(url: emulator.url, rest: "")
            .replacingOccurrences(of: "path: \"-\"", with: "path: \"\(fifo)\"")
            .replacingOccurrences(of: "shutdown_timeout: 5s", with: "shutdown_timeout: 30s")
        let bridge = try BridgeProcess.run(config: config, in: directory)
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        let title = String(repeating: "y", count: 16_384)
        let count = 12
        for index in 0..<count { try emulator.create("articles", ["title": "\(index) \(title)"]) }
        #expect(bridge.waitUntil(timeout: 20) { _ in Self.pipeIsFull(reader) }, "\(bridge.stderr)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForLog("shutting down"), "\(bridge.stderr)")
        // A bridge that did not wait for its queue would exit meanwhile (the wait only makes that visible; the
        // graceful phase may take up to shutdown_timeout). Then read everything: the writer closes at exit.
        usleep(2_000_000)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = ContinuousClock.now + .seconds(TestEnvironment.patient(10))
        while ContinuousClock.now < deadline {
            let got = read(reader, &buffer, buffer.count)
            if got > 0 {
                bytes += buffer[0..<got]
            } else if got == 0 && !bridge.isRunning {
                break  // end of file: the bridge closed its end
            } else {
                usleep(10_000)
            }
        }
        #expect(bridge.waitForExit(timeout: 10) == 0, "\(bridge.stderr)")
        let lines = bytes.split(separator: UInt8(ascii: "\n"))
        #expect(lines.count == count, "\(lines.count) lines; \(bridge.stderr)")
        #expect(!bridge.stderr.contains("graceful shutdown took too long"), "\(bridge.stderr)")
    }

    /// Whether the pipe holds at least half its default capacity (64 KiB) unread: the next 16 KiB line blocks.
    private static func pipeIsFull(_ fd: Int32) -> Bool {
        var unread: Int32 = 0
        return ioctl(fd, UInt(FIONREAD), &unread) == 0 && unread >= 32_768
    }
}
