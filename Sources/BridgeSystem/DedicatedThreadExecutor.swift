#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A task executor with one thread of its own: every job enqueued runs on that thread, in order.
///
/// For a component whose tasks do short blocking C calls (SQLite) and many small async steps (a webhook delivery
/// loop and its attempts): `withTaskExecutorPreference(executor) { … }` keeps the whole task tree on one thread,
/// so resuming a task is a queue push instead of a hop between threads, and the blocking calls stay off Swift's
/// cooperative pool. The thread starts with the first job and ends after `shutdown()` once the queue is empty;
/// a job enqueued later starts it again, so no job is ever stranded.
public final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs`, `running` and `stopping` are guarded by `mutex`/`condition`, a pthread mutex and
    // condition variable owned by this object and destroyed in deinit (the thread holds a strong reference).
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var jobs: [UnownedJob] = []
    private var running = false
    private var stopping = false
    /// A name for debugging.
    public let name: String

    /// Creates the executor; its thread starts with the first job.
    public init(name: String) {
        self.name = name
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    /// Queues `job` for the executor's thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        pthread_mutex_lock(mutex)
        jobs.append(unowned)
        let start = !running
        running = true
        pthread_mutex_unlock(mutex)
        if start { startThread() } else { pthread_cond_signal(condition) }
    }

    /// Lets the thread end once it has run every queued job.
    public func shutdown() {
        pthread_mutex_lock(mutex)
        stopping = true
        pthread_mutex_unlock(mutex)
        pthread_cond_signal(condition)
    }

    private func startThread() {
        let context = Unmanaged.passRetained(self).toOpaque()  // +1, consumed by the thread's entry point
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { raw in
            let executor = Unmanaged<DedicatedThreadExecutor>.fromOpaque(raw!).takeRetainedValue()
            executor.runJobs()
            return nil
        }, context)
        precondition(result == 0, "pthread_create failed: \(result)")
        pthread_detach(thread)
    }

    private func runJobs() {
        let executor = asUnownedTaskExecutor()
        var batch: [UnownedJob] = []
        pthread_mutex_lock(mutex)
        while true {
            while jobs.isEmpty && !stopping { pthread_cond_wait(condition, mutex) }
            if jobs.isEmpty {
                running = false  // stopping and drained; a later enqueue starts a new thread (which drains too)
                pthread_mutex_unlock(mutex)
                return
            }
            swap(&batch, &jobs)
            pthread_mutex_unlock(mutex)
            for job in batch { job.runSynchronously(on: executor) }
            batch.removeAll(keepingCapacity: true)
            pthread_mutex_lock(mutex)
        }
    }
}
