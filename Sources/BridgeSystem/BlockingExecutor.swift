import Dispatch

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
///
/// When no thread can be started (`DetachedThread`: the process's thread limit) and no worker is left to run the
/// queue, `perform` throws that `SystemError` (retriable) and executor jobs and `submit`ted work run on a
/// Dispatch worker instead: slower, but nothing traps and nothing is stranded. With a worker left, queued work
/// waits for it.
public final class BlockingExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: all mutable state (`jobs`, `idleWorkers`, `threadCount`) is guarded by `monitor`,
    // a pthread mutex and condition variable owned by this object and destroyed in deinit.
    private let monitor = PthreadMonitor(clock: CLOCK_REALTIME)  // the idle deadline is a wall-clock time
    private var jobs: [Job] = []
    private var idleWorkers = 0
    private var threadCount = 0
    private let idleTimeout: Int
    private let threadStarter: DetachedThread.Starter
    /// A name for debugging.
    public let label: String

    /// Queued work, and what happens to it when no thread can run it.
    private struct Job {
        let run: () -> Void
        let cannotStart: (SystemError) -> Void
    }

    /// The process-wide executor for blocking calls.
    public static let shared = BlockingExecutor(name: "bridge-blocking")

    /// Creates a pool labelled `name` whose threads exit after `idleTimeoutSeconds` without work.
    public init(
        name: String, idleTimeoutSeconds: Int = 30,
        threadStarter: @escaping DetachedThread.Starter = { body throws(SystemError) in
            try DetachedThread.start(stackSize: 1 << 20, body)
        }
    ) {
        self.label = name
        self.idleTimeout = idleTimeoutSeconds
        self.threadStarter = threadStarter
    }

    deinit {
        // The shared instance lives forever; private pools must outlive their jobs (a job retains `self`).
        monitor.destroy()
    }

    /// Runs an executor job on a pool thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let run = { unowned.runSynchronously(on: executor) }
        submit(Job(run: run, cannotStart: { _ in Self.runOnDispatch(run) }))
    }

    /// Runs `body` on a pool thread and returns its result to the calling task.
    ///
    /// `body` must bound its own blocking time (a poll timeout, a curl timeout): cancellation of the calling task
    /// is not forwarded to a thread that is inside a C call.
    public func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            submit(
                Job(
                    run: { continuation.resume(with: Result { try body() }) },
                    cannotStart: { continuation.resume(throwing: $0) }
                ))
        }
    }

    /// Queues `work` and makes sure a thread will pick it up (a Dispatch worker when no thread can be started).
    public func submit(_ work: @escaping () -> Void) {
        submit(Job(run: work, cannotStart: { _ in Self.runOnDispatch(work) }))
    }

    /// Hands work that no pool thread can run to a Dispatch worker.
    private static func runOnDispatch(_ work: @escaping () -> Void) {
        let handOff = HandOff(work: work)
        DispatchQueue.global().async { handOff.work() }
    }

    /// Work on its way from this queue to Dispatch.
    private struct HandOff: @unchecked Sendable {
        // @unchecked: the work left the queue (under the mutex) and is run exactly once, by Dispatch.
        let work: () -> Void
    }

    private func submit(_ job: Job) {
        pthread_mutex_lock(monitor.mutex)
        jobs.append(job)
        let needsThread = idleWorkers < jobs.count
        if needsThread { threadCount += 1 }
        pthread_mutex_unlock(monitor.mutex)
        if needsThread {
            startWorker()
        } else {
            pthread_cond_signal(monitor.condition)
        }
    }

    private func startWorker() {
        do {
            try threadStarter { [self] in workerLoop() }  // the thread holds the pool until its loop ends
        } catch {
            pthread_mutex_lock(monitor.mutex)
            threadCount -= 1
            // Workers leave only when the queue is empty: with one left, it runs what is queued. With none, the
            // queued work would wait forever; it goes to its fallback instead.
            var stranded: [Job] = []
            if threadCount == 0 { swap(&stranded, &jobs) }
            pthread_mutex_unlock(monitor.mutex)
            pthread_cond_signal(monitor.condition)
            for job in stranded { job.cannotStart(error) }
        }
    }

    private func workerLoop() {
        pthread_mutex_lock(monitor.mutex)
        while true {
            if !jobs.isEmpty {
                do {
                    // The job goes at the end of this scope, before the lock is taken again: its captures may hold
                    // the last reference to an object whose deinit queues work here, and would wait for this lock.
                    let job = jobs.removeFirst()
                    pthread_mutex_unlock(monitor.mutex)
                    job.run()
                }
                pthread_mutex_lock(monitor.mutex)
                continue
            }
            idleWorkers += 1
            var deadline = timespec()
            clock_gettime(CLOCK_REALTIME, &deadline)
            deadline.tv_sec += idleTimeout
            var waitResult: Int32 = 0
            while jobs.isEmpty && waitResult != ETIMEDOUT {
                waitResult = pthread_cond_timedwait(monitor.condition, monitor.mutex, &deadline)
            }
            idleWorkers -= 1
            if jobs.isEmpty {
                threadCount -= 1
                pthread_mutex_unlock(monitor.mutex)
                return
            }
        }
    }
}
