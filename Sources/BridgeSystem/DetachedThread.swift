import Synchronization

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Starts a detached thread for a long-lived loop, and says so when the system refuses one.
///
/// `pthread_create` fails with EAGAIN when the process or its container reaches its thread limit (`ulimit -u`,
/// a cgroup's `pids.max`) or cannot map a stack. That used to be a `precondition` trap; now EAGAIN is retried
/// briefly (threads end all the time, a limit can clear), then the failure is counted in `startFailures` and
/// thrown as a `SystemError` (retriable for EAGAIN) for the caller to degrade, retry or stop with a message
/// (docs/RELIABILITY.md, "Wire numbers and traps: audit").
public enum DetachedThread {
    /// How a component starts its threads: `defaultStarter` (tests pass a starter that fails).
    public typealias Starter = @Sendable (_ body: @escaping @Sendable () -> Void) throws(SystemError) -> Void

    /// Pauses before each retry of an EAGAIN failure, in microseconds.
    static let retryDelays: [UInt32] = [1_000, 10_000, 100_000]

    /// Threads that could not be started since the process began (the `directus_bridge_thread_start_failures_total`
    /// metric).
    public static var startFailures: UInt64 { failures.load(ordering: .relaxed) }
    private static let failures = Atomic<UInt64>(0)

    /// The default starter: `start(stackSize: nil, body)`.
    public static let defaultStarter: Starter = { body throws(SystemError) in try start(stackSize: nil, body) }

    /// Runs `body` on a new detached thread with a stack of `stackSize` bytes (nil: the system default).
    public static func start(stackSize: Int?, _ body: @escaping @Sendable () -> Void) throws(SystemError) {
        // +1 handed to the thread, which releases it when it starts; released here when no thread starts.
        let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
        var result: Int32 = 0
        for delay in [0] + retryDelays {
            // A short pause before retrying EAGAIN (1, 10, 100 ms): a real timer, on the caller's thread because
            // starting a thread is synchronous (there is no task to suspend).
            if delay > 0 { usleep(delay) }
            var thread = pthread_t()
            result = pthread_create(&thread, &attributes, { raw in
                Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue().body()
                return nil
            }, context)
            if result == 0 { return }
            if result != EAGAIN { break }
        }
        Unmanaged<ThreadBody>.fromOpaque(context).release()
        failures.add(1, ordering: .relaxed)
        throw SystemError(operation: "starting a thread (pthread_create)", errno: result)
    }
}

/// The closure a new thread runs, boxed to cross `pthread_create`'s `void *`.
private final class ThreadBody {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}
