@testable import BridgeHTTP
import Synchronization

extension HTTPDeliveryEngine {
    /// One request through the engine's batch interface, awaited: submitted alone to a receiver of its own, whose
    /// one completion resumes the caller; cancelling the caller aborts it (`cancelAll(of:)`). Tests use it to send
    /// many requests from many tasks through the same submit/receiver path the webhook delivery service uses.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        // A task cancelled before it sends submits nothing, as the REST client checks before it sends: checked only
        // after `submit`, the driver thread could complete the transfer before the check ran (ThreadSanitizer at
        // load got a 200 in `cancellingTheTaskAbortsTheTransfer`).
        if Task.isCancelled { throw HTTPClientError(kind: .cancelled, message: "request cancelled", url: request.url) }
        let receiver = Box<DeliveryReceiver>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                let made = DeliveryReceiver { completions in
                    continuation.resume(with: completions[0].result.mapError { $0 as any Error })
                }
                receiver.set(made)
                submit([(tag: 0, request: request)], to: made)
                if Task.isCancelled { cancelAll(of: made) }  // cancelled before the handler could see the receiver
            }
        } onCancel: {
            if let made = receiver.get() { cancelAll(of: made) }
        }
    }
}

/// A value set once from one task and read from a cancellation handler.
final class Box<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)
    func set(_ new: Value) { value.withLock { $0 = new } }
    func get() -> Value? { value.withLock { $0 } }
}

/// The engine as an `HTTPTransport` for the behaviour tests both transports share (through `send` above).
struct EngineTransport: HTTPTransport {
    let engine: HTTPDeliveryEngine

    func send(_ request: HTTPRequest) async throws -> HTTPResponse { try await engine.send(request) }
}
