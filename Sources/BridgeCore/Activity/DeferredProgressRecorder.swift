import Synchronization

/// The dispatcher's progress recorder, connected to the cursor store once the delivery mode is known.
///
/// The dispatcher is built before the bridge has asked Directus whether the activity log is readable; in live mode
/// nothing is ever connected and no batch carries progress.
public final class DeferredProgressRecorder: ProgressRecorder, Sendable {
    private let target = Mutex<CursorStore?>(nil)

    /// Creates an unconnected recorder.
    public init() {}

    /// Connects the cursor store.
    public func connect(_ store: CursorStore) {
        target.withLock { $0 = store }
    }

    /// Records through the connected store; progress arriving before one is connected is a programming error.
    public func record(_ progress: ActivityProgress) throws {
        guard let store = target.withLock({ $0 }) else {
            preconditionFailure("activity progress recorded before the cursor store was connected")
        }
        try store.record(progress)
    }
}
