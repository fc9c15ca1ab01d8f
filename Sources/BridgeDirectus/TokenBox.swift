internal import Synchronization
internal import BridgeEvents
package import BridgeSystem

/// The current access token, readable from the socket reader thread without awaiting the auth actor.
///
/// Each new token bumps `version`, so the reader knows to re-authenticate in band (docs/directus-protocol.md §2.5)
/// exactly once per renewal.
public final class TokenBox: Sendable {
    private let state = Mutex<(token: String?, version: UInt64)>((nil, 0))
    private let renewalRequested = Atomic<Bool>(false)
    /// Rung with each request, for the refresher waiting between its scheduled renewals.
    private let renewalRung = Wakeup()

    /// Creates an empty box.
    public init() {}

    /// The token and its version.
    public var current: (token: String?, version: UInt64) { state.withLock { $0 } }

    /// Publishes a new token.
    public func publish(_ token: String?) {
        state.withLock { state in
            guard state.token != token else { return }
            state.token = token
            state.version &+= 1
        }
    }

    /// Asks the refresher for a new token now (safe from any thread; the socket calls it on TOKEN_EXPIRED).
    public func requestRenewal() {
        renewalRequested.store(true, ordering: .releasing)
        renewalRung.ring()
    }

    /// Takes a pending renewal request (the refresher checks it whenever it wakes).
    public func takeRenewalRequest() -> Bool { renewalRequested.exchange(false, ordering: .acquiring) }

    /// Returns when a renewal is requested (maybe before the wait: check `takeRenewalRequest` after), `deadline`
    /// passed (the scheduled renewal: a real timer) or `stop` was triggered. One waiter: the refresher.
    package func waitForRenewalRequest(until deadline: ContinuousClock.Instant?, stop: ShutdownSignal) async {
        if let deadline {
            await renewalRung.wait(timeout: deadline - .now, until: stop)
        } else {
            await renewalRung.wait(until: stop)
        }
    }
}
