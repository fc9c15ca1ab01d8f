import Synchronization

/// A count of SIGHUPs (logrotate's "reopen your files"), bumped by the signal handler itself: whoever compares it
/// before a write sees every signal delivered before that write, however late the thread that handles signals runs.
///
/// `process` is the count of the bridge's own SIGHUP handler (`SignalHandlers`): the JSON log copy reads it before
/// each line (`LogCopyFile`), since it is opened by the command before the runtime and its signal handling exist.
public final class HangUpCount: Sendable {
    private let count = Atomic<Int>(0)

    /// The count of this process's SIGHUP handler. Its first use allocates: the handler's installer makes that use,
    /// never the handler.
    public static let process = HangUpCount()

    /// None yet (a test's own count, or one of the runtime's).
    public init() {}

    /// Counts one signal. Async-signal-safe (one atomic add, no lock, no allocation): SIGHUP's handler calls it.
    public func signalled() {
        count.wrappingAdd(1, ordering: .releasing)
    }

    /// Signals so far.
    public var current: Int { count.load(ordering: .acquiring) }
}
