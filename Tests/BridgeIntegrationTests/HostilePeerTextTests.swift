import BridgeTestSupport
import Foundation
import Testing

/// Issue 23, item 5: a Directus (or a proxy before it) answering every request with an 8 MiB error message full of
/// escape sequences and line breaks (Tests/tools/http_peers/hostile_directus.py). Before, every retry logged 8 MiB
/// lines, and `check` printed the escapes and a forged row. Every peer text is now bounded and cleaned before it
/// reaches a log line or `check`'s output (real binary).
@Suite(.serialized) struct HostilePeerTextTests {
    private func config(_ server: PythonServer) -> String {
        """
        directus:
          url: http://127.0.0.1:\(server.port)
          auth:
            token: admin-static-token
          reconnect:
            initial_delay: 100ms
            max_delay: 500ms
        subscriptions:
          - collection: articles
        delivery:
          state_dir: ./state
        sinks:
          - type: ndjson
            path: "-"
        log:
          level: debug
        """
    }

    /// Lines of `text` that a peer shaped: an escape byte, a forged line or row, or longer than `limit` bytes.
    private func unsafeLines(_ text: String, limit: Int) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { line in
            line.utf8.contains(0x1B) || line.hasPrefix("2026-01-01T00:00:00.000Z") || line.hasPrefix("ok   forged")
                || line.utf8.count > limit
        }
    }

    @Test func anEightMebibyteErrorWithEscapesMakesBoundedCleanLogLines() throws {
        let server = try PythonServer(script: "http_peers/hostile_directus.py")
        defer { server.stop() }
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "hostile-peer")
        let bridge = try BridgeProcess.run(config: config(server), in: directory)
        // Several retries of the start-up read, each answered with 8 MiB.
        Thread.sleep(forTimeInterval: TestEnvironment.patient(4))
        bridge.send(SIGTERM)
        _ = bridge.waitForExit()
        let log = bridge.stderr
        #expect(log.utf8.count < 256 << 10, "the log is \(log.utf8.count) bytes")
        #expect(log.contains("Service Unavailable") || log.contains("503"), "\(log.prefix(3000))")
        let unsafe = unsafeLines(log, limit: 16 << 10)
        #expect(unsafe.isEmpty, "\(unsafe.count) unsafe lines, the first: \(unsafe.first?.prefix(500) ?? "")")
    }

    @Test func checkPrintsBoundedCleanRows() throws {
        let server = try PythonServer(script: "http_peers/hostile_directus.py")
        defer { server.stop() }
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "hostile-check")
        try config(server).write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        let check = try BridgeProcess(arguments: ["check", "--config", "bridge.yaml"], directory: directory)
        #expect(check.waitForExit(timeout: 60) == 1)
        let rows = check.lines
        #expect(!rows.isEmpty && rows.allSatisfy { $0.hasPrefix("ok   ") || $0.hasPrefix("FAIL ") }, "\(rows)")
        let unsafe = unsafeLines(rows.joined(separator: "\n"), limit: 4 << 10)
        #expect(unsafe.isEmpty, "\(unsafe.count) unsafe rows, the first: \(unsafe.first?.prefix(500) ?? "")")
        let logUnsafe = unsafeLines(check.stderr, limit: 16 << 10)
        #expect(logUnsafe.isEmpty, "\(logUnsafe.count) unsafe lines, the first: \(logUnsafe.first?.prefix(500) ?? "")")
    }
}
