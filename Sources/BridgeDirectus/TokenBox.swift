package import Synchronization
package import BridgeEvents

/// The current access token, readable from the socket reader thread without awaiting the auth actor.
///
/// Each new token bumps `version`, so the reader knows to re-authenticate in band (docs/directus-protocol.md §2.5)
/// exactly once per renewal.
public final class TokenBox: Sendable {
    private let state = Mutex<(token: String?, version: UInt64)>((nil, 0))
    private let renewalRequested = Atomic<Bool>(false)

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
    public func requestRenewal() { renewalRequested.store(true, ordering: .releasing) }

    /// Takes a pending renewal request (the refresher polls this between its scheduled renewals).
    public func takeRenewalRequest() -> Bool { renewalRequested.exchange(false, ordering: .acquiring) }
}
