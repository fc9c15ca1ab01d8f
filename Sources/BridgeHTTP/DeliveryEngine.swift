/// The batch interface of a delivery engine: one loop hands over many requests at once and gets their outcomes
/// back in batches through a `DeliveryReceiver`, instead of a task waiting on each request.
///
/// `HTTPDeliveryEngine` is the production engine (curl multi handles on driver threads); tests substitute scripted
/// engines that answer through the receiver in the same way, so the code that submits runs as in production.
///
/// The contract every engine keeps:
/// - requests start in the order they were submitted, at most the engine's in-flight limit at a time;
/// - each submitted request is answered exactly once, with its tag: its final response, or an `HTTPClientError`
///   (`.cancelled` when it was withdrawn or aborted), and whether it was sent (`Completion.sent`: false when it
///   never left the queue);
/// - answers arrive on a thread of the engine's, never inside `submit` for an accepted request; a request
///   submitted after `shutdown()` started is answered `.cancelled`, not sent.
public protocol DeliveryEngine: Sendable {
    /// Queues `requests` in order and returns at once; `receiver` gets each outcome with the request's tag.
    func submit(_ requests: [(tag: Int64, request: HTTPRequest)], to receiver: DeliveryReceiver)

    /// Aborts the requests submitted to `receiver` that still wait for a slot (answered `.cancelled`, not sent);
    /// those already sent go on.
    func cancelWaiting(of receiver: DeliveryReceiver)

    /// Aborts every request submitted to `receiver` that has not finished, sent or waiting; each is answered
    /// `.cancelled`.
    func cancelAll(of receiver: DeliveryReceiver)

    /// Aborts everything in flight or waiting (answered `.cancelled`), frees the engine's resources and returns
    /// once that is done.
    func shutdown() async
}
