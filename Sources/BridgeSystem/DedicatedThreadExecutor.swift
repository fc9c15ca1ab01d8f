import Dispatch

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
///
/// It also has one timer (`setTimer`): the thread sleeps on its condition variable until a job or the deadline,
/// so a timed wait costs no `Task.sleep` (a dispatch timer, a task and a cross-thread wake-up each).
///
/// When the thread cannot be started (`DetachedThread`: the process's thread limit), the same loop runs on a
/// Dispatch worker instead: jobs still run one at a time and in order, and `threadStartFailures` counts it.
public final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs`, `running`, `stopping` and the timer are guarded by `monitor`, a pthread mutex and
    // condition variable owned by this object and destroyed in deinit (the thread holds a strong reference).
    private let monitor = PthreadMonitor(clock: CLOCK_MONOTONIC)  // timer deadlines ignore wall-clock jumps
    private var jobs: [UnownedJob] = []
    private var running = false
    private var stopping = false
    private var timerDeadline: timespec?
    private var timerAction: (@Sendable () -> Void)?
    private let threadStarter: DetachedThread.Starter
    /// A name for debugging.
    public let name: String

    /// Creates the executor; its thread starts with the first job.
    public init(name: String, threadStarter: @escaping DetachedThread.Starter = DetachedThread.defaultStarter) {
        self.name = name
        self.threadStarter = threadStarter
    }

    deinit {
        monitor.destroy()
    }

    /// Queues `job` for the executor's thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        pthread_mutex_lock(monitor.mutex)
        jobs.append(unowned)
        let start = !running
        running = true
        pthread_mutex_unlock(monitor.mutex)
        if start { startThread() } else { pthread_cond_signal(monitor.condition) }
    }

    /// Runs `action` on the executor's thread once `delay` has passed, replacing any timer set before; nil
    /// `action` cancels. `action` runs between jobs and must be short (typically: resume a waiting task).
    public func setTimer(after delay: Duration, _ action: (@Sendable () -> Void)?) {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let (seconds, attoseconds) = max(delay, .zero).components
        var nanoseconds = Int64(deadline.tv_nsec) + attoseconds / 1_000_000_000
        deadline.tv_sec += Int(seconds + nanoseconds / 1_000_000_000)
        nanoseconds %= 1_000_000_000
        deadline.tv_nsec = Int(nanoseconds)
        pthread_mutex_lock(monitor.mutex)
        timerDeadline = action == nil ? nil : deadline
        timerAction = action
        let start = !running && action != nil
        if start { running = true }
        pthread_mutex_unlock(monitor.mutex)
        if start { startThread() } else { pthread_cond_signal(monitor.condition) }
    }

    /// Lets the thread end once it has run every queued job (a pending timer is dropped).
    public func shutdown() {
        pthread_mutex_lock(monitor.mutex)
        stopping = true
        pthread_mutex_unlock(monitor.mutex)
        pthread_cond_signal(monitor.condition)
    }

    private func startThread() {
        do {
            try threadStarter { [self] in runJobs() }  // the thread holds the executor until its loop ends
        } catch {
            // `running` stays set: the loop below owns the queue, wherever it runs.
            DispatchQueue.global().async { [self] in runJobs() }
        }
    }

    private func runJobs() {
        let executor = asUnownedTaskExecutor()
        var batch: [UnownedJob] = []
        pthread_mutex_lock(monitor.mutex)
        while true {
            var fired: (@Sendable () -> Void)?
            while jobs.isEmpty && fired == nil && !stopping {
                if var deadline = timerDeadline {
                    let waited = pthread_cond_timedwait(monitor.condition, monitor.mutex, &deadline)
                    if waited == ETIMEDOUT, timerDeadline != nil {
                        fired = timerAction
                        timerDeadline = nil
                        timerAction = nil
                    }
                } else {
                    pthread_cond_wait(monitor.condition, monitor.mutex)
                }
            }
            if jobs.isEmpty && fired == nil {
                running = false  // stopping and drained; a later enqueue starts a new thread (which drains too)
                pthread_mutex_unlock(monitor.mutex)
                return
            }
            swap(&batch, &jobs)
            pthread_mutex_unlock(monitor.mutex)
            fired?()
            fired = nil  // released before the lock is taken again (`BlockingExecutor.workerLoop`)
            for job in batch { job.runSynchronously(on: executor) }
            batch.removeAll(keepingCapacity: true)
            pthread_mutex_lock(monitor.mutex)
        }
    }
}
