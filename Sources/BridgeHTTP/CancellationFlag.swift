import Synchronization

/// A cancellation signal shared between a waiting task and the thread running its transfer.
///
/// The task's cancellation handler calls `cancel()`; the transfer thread reads `isCancelled` from curl's
/// progress callback and from its poll loop. A transfer that sleeps in `curl_multi_poll` attaches its
/// multi handle's waker so `cancel()` wakes it at once instead of after the poll timeout.
final class CancellationFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    /// The waker of the multi handle the transfer currently sleeps on. Attach, detach and `cancel()` take
    /// this lock, so a waker is never used after its transfer detached it (and maybe freed the handle).
    private let waker = Mutex<CurlMultiWaker?>(nil)

    /// Creates an unset flag.
    init() {}

    /// Whether `cancel()` was called. Cheap: read on every progress callback.
    var isCancelled: Bool { flag.load(ordering: .acquiring) }

    /// Sets the flag and wakes the attached transfer, if any.
    func cancel() {
        waker.withLock { waker in
            flag.store(true, ordering: .releasing)
            waker?.wakeUp()
        }
    }

    /// Registers the multi handle a transfer is about to poll on.
    func attach(_ newWaker: CurlMultiWaker) {
        waker.withLock { $0 = newWaker }
    }

    /// Unregisters the waker before its multi handle is reused or freed.
    func detach() {
        waker.withLock { $0 = nil }
    }
}
