import BridgeSystem
import Foundation
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeSinks

#if canImport(Glibc)
    import Glibc
#endif

/// What an operator with logrotate expects of SIGHUP: once the signal has been delivered, no line written later goes
/// to the file logrotate moved away (and may compress or delete). `raiseHere` runs the handler on the calling thread
/// before it returns, so each test knows exactly which writes come after the signal.
extension SignalHandlersTests {
    /// The handler itself counts the request: it is visible the moment `raise` returns, whatever the signal thread
    /// is doing.
    @Test func aSIGHUPIsCountedBeforeTheSignalReturns() throws {
        let reopen = ReopenRequests()
        let handlers = try SignalHandlers(stop: ShutdownSignal(), reopen: reopen, logger: .silent)
        defer { handlers.cancel() }
        for round in 1...20 {
            raiseHere(SIGHUP)
            #expect(reopen.current == round, "round \(round): counted only later, by the signal thread")
        }
    }

    /// A batch whose first write fails after logrotate moved the file and signalled is retried into the new file,
    /// and the batch after a signal that came right after a write goes to the newer one.
    @Test func writesAfterASIGHUPGoToTheNewFileRetriesToo() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sighup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("out.ndjson").path
        let sink = try RotatingSink(path: path)
        let reopen = ReopenRequests()
        let handlers = try SignalHandlers(stop: ShutdownSignal(), reopen: reopen, logger: .silent)
        defer { handlers.cancel() }
        let registry = MetricsRegistry()
        let metrics = PipelineMetrics(registry: registry)
        let inbox = SinkInbox(
            sinkID: "file",
            capacity: 100,
            maxBytes: 1 << 20,
            registry: registry,
            pipelineMetrics: metrics,
            logger: .silent
        )
        let runner = SinkRunner(
            sink: ConfiguredSink(id: "file", connector: sink, filter: EventFilter()),
            inbox: inbox,
            recorder: nil,
            metrics: metrics,
            health: HealthState(expectedSubscriptions: []),
            reopenRequests: reopen,
            logger: .silent
        )
        for n in 1...3 { inbox.offer(EventBatch(events: [makeEvent(n)])) }
        inbox.queue.close()
        try await runner.runOnOwnThread()
        #expect(try String(contentsOfFile: path + ".1", encoding: .utf8) == "{\"n\":1}\n")
        #expect(try String(contentsOfFile: path + ".2", encoding: .utf8) == "{\"n\":2}\n")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{\"n\":3}\n")
        #expect(sink.attempts == 4)
    }

    /// The JSON log copy (`DIRECTUS_BRIDGE_JSON_LOG_FILE`) is opened before the runtime: the handler's own count
    /// (`HangUpCount.process`) reaches it, and the first line after the signal goes to the new file.
    @Test func aSIGHUPReopensTheJSONLogCopy() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sighup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("copy.json").path
        let stderr = open(directory.appendingPathComponent("stderr.log").path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        try #require(stderr >= 0)
        defer { close(stderr) }
        let log = StderrLogHandler(
            level: .info,
            format: .text,
            fd: stderr,
            colour: false,
            jsonCopy: try LogCopyFile(path: path)
        )
        let handlers = try SignalHandlers(stop: ShutdownSignal(), reopen: ReopenRequests(), logger: .silent)
        defer { handlers.cancel() }
        log.log(level: .info, message: "before", metadata: [:], label: "t")
        _ = rename(path, path + ".1")
        raiseHere(SIGHUP)
        log.log(level: .info, message: "after", metadata: [:], label: "t")
        let rotated = try String(contentsOfFile: path + ".1", encoding: .utf8)
        #expect(rotated.contains("\"before\"") && !rotated.contains("\"after\""), "\(rotated)")
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("\"after\""))
    }
}

/// An NDJSON file sink whose file logrotate moves (`rename`) and then signals: while the second write is attempted
/// (which then fails, as on a full disk) and right after the third.
private final class RotatingSink: SinkConnector, @unchecked Sendable {
    // @unchecked: used by the one runner, one call at a time (`SinkConnector`).
    let name = "rotating"
    private let inner: NDJSONSink
    private let path: String
    private(set) var attempts = 0

    init(path: String) throws {
        self.path = path
        inner = try NDJSONSink(path: path, fsync: .never)
    }

    func accept(_ events: [EncodedEvent]) async throws(SinkError) {
        attempts += 1
        if attempts == 2 {
            rotate(to: path + ".1")
            throw SinkError(sink: name, message: "no space left on device", isRetriable: true)
        }
        try await inner.accept(events)
        if attempts == 3 { rotate(to: path + ".2") }
    }

    func reopen() async throws(SinkError) { try await inner.reopen() }
    func close() async throws(SinkError) { try await inner.close() }

    private func rotate(to rotated: String) {
        _ = rename(path, rotated)
        raiseHere(SIGHUP)
    }
}

/// Raises `signal` on this thread with it unblocked, so its handler has run when this returns. The test runner's
/// threads (Dispatch's workers, and threads they start) block signals: a plain `raise` stays pending there.
private func raiseHere(_ signal: Int32) {
    var unblock = sigset_t()
    var previous = sigset_t()
    sigemptyset(&unblock)
    sigaddset(&unblock, signal)
    pthread_sigmask(SIG_UNBLOCK, &unblock, &previous)
    raise(signal)
    pthread_sigmask(SIG_SETMASK, &previous, nil)
}
