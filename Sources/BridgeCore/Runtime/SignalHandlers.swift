package import BridgeSinks
package import BridgeSystem
internal import Synchronization

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// SIGINT/SIGTERM start a graceful shutdown; a second one exits at once (the outbox and the cursor are committed
/// transactionally, so state stays consistent); SIGHUP reopens NDJSON files and the JSON log copy.
///
/// The handlers are installed with `sigaction` before `init` returns, and a signal only writes its number to a pipe
/// that a thread of this object reads; SIGHUP's handler also counts the reopen request itself
/// (`ReopenRequests.signalled`, and `HangUpCount.process` for the JSON log copy), so that no write starting after
/// the signal was delivered goes to the rotated file, however late the thread runs (it only wakes the idle sinks).
///
/// Dispatch signal sources were used before: they arm themselves asynchronously after `resume()`, and a signal in
/// between met the `SIG_IGN` they need and was lost — a SIGTERM sent as soon as the bridge logged its start-up
/// warnings left it running (`SignalHandlersTests`).
package final class SignalHandlers: Sendable {
    private static let handled = [SIGINT, SIGTERM, SIGHUP]
    /// Written to the pipe by `cancel` to end the reading thread (no signal has number 0).
    private static let stopByte: UInt8 = 0

    private let pipe: (read: Int32, write: Int32)
    private let stopped = Atomic<Bool>(false)
    /// Kept alive while the signal handler may reach it through `signalReopenRequests` (unretained there).
    private let reopen: ReopenRequests

    /// Installs the handlers; only one instance may be active at a time (the signal handler is process-wide).
    package init(stop: ShutdownSignal, reopen: ReopenRequests, logger: Logger) throws(SystemError) {
        self.reopen = reopen
        var ends: [Int32] = [-1, -1]
        guard Glibc.pipe(&ends) == 0 else { throw SystemError(operation: "pipe", errno: errno) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        // A full pipe (thousands of unread signals) drops the newest rather than blocking the signal handler.
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        pipe = (ends[0], ends[1])
        let reader = ends[0]
        let counter = SignalCounter(stop: stop, reopen: reopen, logger: logger)
        do {
            try DetachedThread.start(stackSize: 64 * 1024) {
                var byte: UInt8 = 0
                while true {
                    let count = read(reader, &byte, 1)
                    if count < 0 && errno == EINTR { continue }
                    if count <= 0 || byte == Self.stopByte { break }
                    counter.received(Int32(byte))
                }
                close(reader)
            }
        } catch {
            close(ends[0])
            close(ends[1])
            throw error
        }
        // Made here, not in the handler: a static's first use allocates (`HangUpCount.process`).
        _ = HangUpCount.process
        signalReopenRequests.store(Unmanaged.passUnretained(reopen), ordering: .releasing)
        signalPipeWriteEnd.store(ends[1], ordering: .releasing)
        for number in Self.handled {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = forwardSignalToPipe
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(number, &action, nil)
        }
    }

    /// Stops handling: the signals are ignored from now on (the bridge is on its way out) and the thread ends.
    package func cancel() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        for number in Self.handled { signal(number, SIG_IGN) }
        signalPipeWriteEnd.store(-1, ordering: .releasing)
        signalReopenRequests.store(nil, ordering: .releasing)
        var byte = Self.stopByte
        _ = write(pipe.write, &byte, 1)
        close(pipe.write)
    }

    deinit { cancel() }
}

/// The pipe's write end while `SignalHandlers` is active, -1 otherwise (read by the signal handler: an atomic load
/// and `write(2)` are async-signal-safe).
private let signalPipeWriteEnd = Atomic<Int32>(-1)

/// The active `SignalHandlers`' reopen requests, nil otherwise (read by the signal handler: an atomic load).
private let signalReopenRequests = Atomic<Unmanaged<ReopenRequests>?>(nil)

/// The process-wide signal handler: counts a SIGHUP's reopen request and forwards the signal's number to the active
/// `SignalHandlers`.
private func forwardSignalToPipe(_ number: Int32) {
    let savedErrno = errno
    // No retain or release (not async-signal-safe in general): the active `SignalHandlers` holds the object.
    if number == SIGHUP {
        HangUpCount.process.signalled()  // the JSON log copy's reopen (`LogCopyFile`)
        if let requests = signalReopenRequests.load(ordering: .acquiring) {
            requests._withUnsafeGuaranteedRef { $0.signalled() }
        }
    }
    let descriptor = signalPipeWriteEnd.load(ordering: .acquiring)
    if descriptor >= 0 {
        var byte = UInt8(truncatingIfNeeded: number)
        _ = write(descriptor, &byte, 1)
    }
    errno = savedErrno
}

/// What the signals mean, in the order they arrive (on the reading thread).
private final class SignalCounter: Sendable {
    private let stop: ShutdownSignal
    private let reopen: ReopenRequests
    private let logger: Logger
    private let first = Mutex<ContinuousClock.Instant?>(nil)

    init(stop: ShutdownSignal, reopen: ReopenRequests, logger: Logger) {
        self.stop = stop
        self.reopen = reopen
        self.logger = logger
    }

    func received(_ number: Int32) {
        if number == SIGHUP {
            reopen.wakeRunners()  // counted by the handler already
            return
        }
        let now = ContinuousClock.now
        let earlier = first.withLock { first in
            defer { if first == nil { first = now } }
            return first
        }
        guard let earlier else {
            logger.info("shutting down", metadata: ["signal": number == SIGINT ? "SIGINT" : "SIGTERM"])
            stop.trigger()
            return
        }
        // Supervisors like timeout(1) signal the child and then its process group: one request.
        if now - earlier < .seconds(1) { return }
        logger.warning("second signal: exiting now")
        exit(1)
    }
}
