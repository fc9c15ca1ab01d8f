import BridgeHTTP
import BridgeSystem
import Synchronization

extension WebhookDeliveryService {
    /// Sends one attempt (signed now, with the current secrets) and posts its outcome to the loop.
    func attempt(_ payload: OutboxPayload) async {
        let request = builder.request(id: payload.eventID, body: payload.body, timestamp: Timestamp.now().unixSeconds)
        let outcome: AttemptOutcome
        do {
            let response = try await transport.send(request)
            let retryAfter = RetryAfter.parse(response.header("retry-after"), now: Timestamp.now().unixSeconds)
            outcome = .response(status: response.status, retryAfter: retryAfter, body: Array(response.body.prefix(1024)))
        } catch let error as HTTPClientError where error.kind == .cancelled {
            outcome = .cancelled
        } catch {
            // Any other failure is retried, HTTP/2 stream errors (curl 92) included: libcurl 7.88 reports one when
            // a receiver answers before reading the whole body, and a retry is the safe reading of that.
            outcome = Task.isCancelled ? .cancelled : .failure("\(error)")
        }
        finished.withLock { $0.append(FinishedAttempt(seq: payload.seq, eventID: payload.eventID, outcome: outcome)) }
        doorbell.ring()
    }

    /// Applies an attempt's outcome to the loop's state: the outbox write to make, metrics and logs.
    func conclude(_ attempt: FinishedAttempt, in loop: inout Loop, now: Int64) {
        guard
            let conclusion = loop.state.attemptEnded(
                seq: attempt.seq, outcome: attempt.outcome, now: now, jitter: settings.jitter())
        else { return }
        guard let decision = conclusion.decision, let write = conclusion.write else {
            metrics?.attempted(.cancelled, status: nil)
            return
        }
        loop.writes.append(write)
        var status: Int?
        var detail: String
        switch attempt.outcome {
        case .response(let code, _, _):
            status = code
            detail = "HTTP \(code)"
        case .failure(let message):
            detail = message
        case .cancelled:
            detail = "cancelled"
        }
        var metadata: LogMetadata = [
            LogKey.sink: sinkID, LogKey.eventID: attempt.eventID, LogKey.attempt: "\(conclusion.attempt)",
        ]
        if let status { metadata[LogKey.status] = "\(status)" } else { metadata[LogKey.error] = detail }
        switch decision {
        case .delivered:
            metrics?.attempted(.delivered, status: status)
            metrics?.delivered(afterSeconds: Double(now - conclusion.createdAt) / 1000)
            if loop.receiverFailing {
                loop.receiverFailing = false
                logger.info("webhook deliveries succeed again", metadata: [LogKey.sink: sinkID])
            }
        case .retry(let delay):
            metrics?.attempted(.retry, status: status)
            metadata[LogKey.retryDelay] = RealtimeSupervisor.format(delay)
            if loop.receiverFailing {
                logger.debug("webhook attempt failed; retrying", metadata: metadata)
            } else {
                loop.receiverFailing = true
                logger.warning("webhook attempt failed; retrying", metadata: metadata)
            }
        case .deadLetter(let reason):
            metrics?.attempted(.deadLetter, status: status)
            metadata[LogKey.reason] = reason
            logger.warning("webhook delivery dead-lettered", metadata: metadata)
        }
    }
}
