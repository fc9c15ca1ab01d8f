package import BridgeSystem
internal import Synchronization

/// The `resync` requests handed to a running reader (`ActivityReader.requestResync`) and not taken yet, and the wait
/// of the reader that gives way to the next one: a put on the full queue or a snapshot's wait to be durable takes
/// the request at once (`ActivityReaderLoop.waitTakingResyncs`) rather than holding it for as long as the sink takes
/// nothing.
package final class ResyncRequests: Sendable {
    private struct State {
        var asked: Set<String> = []
        /// Triggered at the next request. One signal at a time: the reader's loop is the only one that waits.
        var next: ShutdownSignal?
    }

    private let state = Mutex(State())

    /// Nothing asked.
    package init() {}

    /// Records `uids` as asked and interrupts the reader's wait.
    package func ask(_ uids: Set<String>) {
        guard !uids.isEmpty else { return }
        let interrupted = state.withLock { state in
            state.asked.formUnion(uids)
            defer { state.next = nil }
            return state.next
        }
        interrupted?.trigger()
    }

    /// A signal triggered when a resync is asked, at once when one was asked and not taken yet.
    package func signal() -> ShutdownSignal {
        let (signal, asked) = state.withLock { state -> (ShutdownSignal, Bool) in
            if !state.asked.isEmpty { return (ShutdownSignal(), true) }
            let next = state.next ?? ShutdownSignal()
            state.next = next
            return (next, false)
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
}
