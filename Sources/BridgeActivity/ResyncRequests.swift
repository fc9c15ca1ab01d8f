package import BridgeSystem
internal import Synchronization

/// The `resync` requests handed to a running reader (`ActivityReader.requestResync`) and not taken yet, and the
/// snapshot that waits for its sink while one of its subscription comes: it gives way to the request
/// (`ActivityReaderLoop.waitSuperseding`) rather than holding it for as long as the sink takes nothing.
package final class ResyncRequests: Sendable {
    private struct State {
        var asked: Set<String> = []
        /// The waiting snapshot's signal, by subscription uid.
        var watched: [String: ShutdownSignal] = [:]
    }

    private let state = Mutex(State())

    /// Nothing asked.
    package init() {}

    /// Records `uids` as asked and interrupts the wait of a snapshot of one of them.
    package func ask(_ uids: Set<String>) {
        let interrupted = state.withLock { state in
            state.asked.formUnion(uids)
            return uids.compactMap { state.watched.removeValue(forKey: $0) }
        }
        for signal in interrupted { signal.trigger() }
    }

    /// A signal triggered when a resync of `uid` is asked, at once when one was asked and not taken yet.
    package func signal(for uid: String) -> ShutdownSignal {
        let signal = ShutdownSignal()
        let asked = state.withLock { state in
            if state.asked.contains(uid) { return true }
            state.watched[uid] = signal
            return false
        }
        if asked { signal.trigger() }
        return signal
    }

    /// Takes every request.
    package func takeAll() -> Set<String> {
        state.withLock { state in
            defer { state.asked.removeAll() }
            return state.asked
        }
    }

    /// Takes the request of `uid`; whether there was one.
    package func take(_ uid: String) -> Bool {
        state.withLock { $0.asked.remove(uid) != nil }
    }
}
