/// Where `HTTPDeliveryEngine.submit(_:to:)` reports finished requests: many at once, once per turn of the
/// engine's driver, instead of resuming one waiting task per request.
///
/// Made for a caller that keeps many requests in flight from one loop (the webhook delivery service): one hand-over
/// per batch each way instead of a task, a continuation and a thread wake-up per request.
public final class DeliveryReceiver: Sendable {
    /// One finished request: the caller's tag and the response, or why there is none (`.cancelled` after
    /// `HTTPDeliveryEngine.cancelAll(of:)` or at shutdown).
    public struct Completion: Sendable {
        /// The tag given with the request.
        public var tag: Int64
        /// The final response or the error.
        public var result: Result<HTTPResponse, HTTPClientError>
        /// Whether the request was started; false when it was cancelled or refused while it waited for a slot.
        public var sent: Bool
    }

    private let handler: @Sendable ([Completion]) -> Void

    /// Creates a receiver; `handler` runs on the engine's driver thread and must return quickly (hand the batch
    /// over, do not work on it there).
    public init(_ handler: @escaping @Sendable ([Completion]) -> Void) {
        self.handler = handler
    }

    func deliver(_ completions: [Completion]) {
        handler(completions)
    }
}
