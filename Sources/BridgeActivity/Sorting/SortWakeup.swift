package import BridgeSystem
internal import Synchronization
internal import BridgeEvents
public import BridgeDirectus

/// Wakes the sort watcher (directus-protocol.md §14.3): the socket reader reports every `update` event's keys; the
/// watcher takes them, coalesced per collection, between checks. A (re)connect asks for a check of everything.
public final class SortWakeup: ActivityTrigger, Sendable {
    /// What the socket reported about one collection since the watcher last looked.
    package struct Updates: Sendable, Equatable {
        /// Keys named by update events, by bytes (`ItemKey`): two keys Swift holds equal are two items to Directus.
        package var keys: Set<ItemKey> = []
        /// Keys the socket reader turned into event lines itself (live mode): already delivered.
        package var delivered: Set<ItemKey> = []
        /// An update event that named no usable key (its query leaves the primary key out).
        package var unnamed = false
    }

    private let signal = ActivityWakeup()
    private let updates = Mutex<[String: Updates]>([:])

    /// Creates a wake-up with nothing pending.
    public init() {}

    public func changeSeen(collection: String) {}

    public func updateSeen(collection: String, keys: [String], delivered: Bool) {
        updates.withLock { pending in
            var entry = pending[collection] ?? Updates()
            entry.keys.formUnion(keys.map(ItemKey.init))
            if delivered { entry.delivered.formUnion(keys.map(ItemKey.init)) }
            if keys.isEmpty { entry.unnamed = true }
            pending[collection] = entry
        }
        signal.changeSeen(collection: collection)
    }

    public func socketReconnected() {
        signal.socketReconnected()
    }

    /// Takes (and clears) what happened: the updates per collection, and whether the socket reconnected.
    package func take() -> (updates: [String: Updates], reconnected: Bool) {
        let reconnected = signal.take().reconnected
        let taken = updates.withLock { pending -> [String: Updates] in
            defer { pending = [:] }
            return pending
        }
        return (taken, reconnected)
    }

    /// Returns when something is pending, `stop` was triggered or the task was cancelled.
    package func wait(stop: ShutdownSignal) async {
        await signal.wait(timeout: .seconds(3600), stop: stop)
    }
}
