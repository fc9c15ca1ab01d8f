#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A thread pool for blocking C calls (`poll`, `connect`, `SSL_read`, `curl_easy_perform`, `fsync`), so they never
/// occupy Swift's cooperative pool (two threads on this machine).
///
/// A job runs on an idle worker or on a new thread; idle workers exit after `idleTimeout`. Unlike a dispatch
/// queue, a blocked job never delays another: every queued job gets a thread at once.
///
/// Use it as a `TaskExecutor` (`withTaskExecutorPreference(executor) { … }`) or through `perform(_:)`.
public final class BlockingExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: all mutable state (`jobs`, `idleWorkers`, `threadCount`) is guarded by `mutex`/`condition`,
    // a pthread mutex and condition variable owned by this object and destroyed in deinit.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var jobs: [() -> Void] = []
    private var idleWorkers = 0
    private var threadCount = 0
    private let idleTimeout: Int
    /// A name for debugging.
    public let label: String

    /// The process-wide executor for blocking calls.
    public static let shared = BlockingExecutor(name: "bridge-blocking")

    /// Creates a pool labelled `name` whose threads exit after `idleTimeoutSeconds` without work.
    public init(name: String, idleTimeoutSeconds: Int = 30) {
        self.label = name
        self.idleTimeout = idleTimeoutSeconds
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        // The shared instance lives forever; private pools must outlive their jobs (a job retains `self`).
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    /// Runs an executor job on a pool thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        submit { unowned.runSynchronously(on: executor) }
    }

    /// Runs `body` on a pool thread and returns its result to the calling task.
    ///
    /// `body` must bound its own blocking time (a poll timeout, a curl timeout): cancellation of the calling task
    /// is not forwarded to a thread that is inside a C call.
    public func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            submit {
                continuation.resume(with: Result { try body() })
            }
        }
    }

    /// Queues `work` and makes sure a thread will pick it up.
    public func submit(_ work: @escaping () -> Void) {
        pthread_mutex_lock(mutex)
        jobs.append(work)
        let needsThread = idleWorkers < jobs.count
        if needsThread { threadCount += 1 }
        pthread_mutex_unlock(mutex)
        if needsThread {
            startWorker()
        } else {
            pthread_cond_signal(condition)
        }
    }

    private func startWorker() {
        let context = Unmanaged.passRetained(self).toOpaque()  // +1, consumed by the thread's entry point
        var thread = pthread_t()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        pthread_attr_setstacksize(&attributes, 1 << 20)
        let result = pthread_create(&thread, &attributes, { raw in
            let pool = Unmanaged<BlockingExecutor>.fromOpaque(raw!).takeRetainedValue()
            pool.workerLoop()
            return nil
        }, context)
        pthread_attr_destroy(&attributes)
        precondition(result == 0, "pthread_create failed: \(result)")
    }

    private func workerLoop() {
        pthread_mutex_lock(mutex)
        while true {
            if !jobs.isEmpty {
                let job = jobs.removeFirst()
                pthread_mutex_unlock(mutex)
                job()
                pthread_mutex_lock(mutex)
                continue
            }
            idleWorkers += 1
            var deadline = timespec()
            clock_gettime(CLOCK_REALTIME, &deadline)
            deadline.tv_sec += idleTimeout
            var waitResult: Int32 = 0
            while jobs.isEmpty && waitResult != ETIMEDOUT {
                waitResult = pthread_cond_timedwait(condition, mutex, &deadline)
            }
            idleWorkers -= 1
            if jobs.isEmpty {
                threadCount -= 1
                pthread_mutex_unlock(mutex)
                return
            }
        }
    }
}
