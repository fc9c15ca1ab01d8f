package import BridgeHTTP
internal import BridgeSystem
internal import Synchronization
internal import BridgeEvents

extension WebhookDeliveryService {
    /// Hands this turn's attempts (signed now, with the current secrets) to the engine in one batch; their
    /// outcomes come back through `receiver`.
    package func submit(_ payloads: [OutboxPayload], in loop: inout Loop) {
        let timestamp = Timestamp.now().unixSeconds
        var requests: [(tag: Int64, request: HTTPRequest)] = []
        requests.reserveCapacity(payloads.count)
        for payload in payloads {
            loop.submitted[payload.seq] = payload.eventID
            requests.append((payload.seq, builder.request(id: payload.eventID, body: payload.body, timestamp: timestamp)))
        }
        engineCompletions.submitted(requests.count)
        engine.submit(requests, to: receiver)
    }

    /// What an attempt's transport result means for the retry policy.
    package static func outcome(of result: Result<HTTPResponse, HTTPClientError>) -> AttemptOutcome {
        switch result {
        case .success(let response):
            // Only a retried answer has a use for Retry-After: a 2xx or dead-lettering answer's header is not read.
            let retryAfter =
                RetryPolicy.isRetriable(status: response.status)
                ? RetryAfter.parse(response.header("retry-after"), now: Timestamp.now().unixSeconds) : nil
            return .response(status: response.status, retryAfter: retryAfter, body: Array(response.body.prefix(1024)))
        case .failure(let error) where error.kind == .cancelled:
            return .cancelled
        case .failure(let error) where error.kind == .tls:
            // OpenSSL's reason can be as obscure as "asn1 encoding routines::EVP lib" (a CA of the same name with
            // another key): say what it most likely means. Retried all the same, the certificate may be fixed.
            return .failure(
                "TLS failed, most likely the receiver's certificate is not trusted (trusted: the system store and "
                    + "directus.tls.ca_file): \(error)")
        case .failure(let error):
            // Any other failure is retried, HTTP/2 stream errors (curl 92) included: libcurl 7.88 reports one when
            // a receiver answers before reading the whole body, and a retry is the safe reading of that.
            return .failure("\(error)")
        }
    }

    /// Applies an attempt's outcome to the loop's state: the outbox write to make, metrics and logs.
    package func conclude(_ attempt: FinishedAttempt, in loop: inout Loop, now: Int64) {
        guard
            let conclusion = loop.state.attemptEnded(
                seq: attempt.seq,
                outcome: attempt.outcome,
                now: now,
                jitter: attempt.outcome.isSuccess ? 1 : settings.jitter()
            )
        else { return }
        guard let decision = conclusion.decision, let write = conclusion.write else {
            if attempt.sent { metrics?.attempted(.cancelled, status: nil) }
            return
        }
        loop.writes.append(write)
        if write.removesRow { loop.uncommittedItems.insert(conclusion.itemHash) }
        if loop.uncommittedSince == nil { loop.uncommittedSince = .now }
        var status: Int?
        if case .response(let code, _, _) = attempt.outcome { status = code }
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
            var metadata = logMetadata(attempt, attempt: conclusion.attempt, status: status)
            metadata[LogKey.retryDelay] = delay
            if loop.receiverFailing {
                logger.debug("webhook attempt failed; retrying", metadata: metadata)
            } else {
                loop.receiverFailing = true
                engine.cancelWaiting(of: receiver)  // signed now, maybe sent much later: see `attemptLimit`
                logger.warning("webhook attempt failed; retrying", metadata: metadata)
            }
        case .deadLetter(let reason):
            metrics?.attempted(.deadLetter, status: status)
            loop.deadLetterLog.log(now: .now) {
                var metadata = logMetadata(attempt, attempt: conclusion.attempt, status: status)
                metadata[LogKey.reason] = reason
                logger.error("webhook delivery dead-lettered", metadata: metadata)  // as a broker sink's dead letters
            } total: { logDeadLettersHeldBack($0) }
        }
    }

    /// The total of dead letters `Loop.deadLetterLog` kept from the log in a window.
    func logDeadLettersHeldBack(_ count: Int) {
        logger.error(
            "more webhook deliveries dead-lettered than logged one by one (directus-bridge dlq list shows each)",
            metadata: [LogKey.sink: sinkID, LogKey.count: count])
    }

    private func logMetadata(_ finished: FinishedAttempt, attempt: Int, status: Int?) -> LogMetadata {
        var metadata: LogMetadata = [
            LogKey.sink: sinkID, LogKey.eventID: finished.eventID, LogKey.attempt: attempt,
        ]
        if let status {
            metadata[LogKey.status] = status
        } else if case .failure(let message) = finished.outcome {
            metadata[LogKey.error] = message
        }
        return metadata
    }
}

extension AttemptOutcome {
    /// A 2xx answer (no retry delay needed, so no random jitter drawn: that costs a getrandom call).
    fileprivate var isSuccess: Bool {
        if case .response(let status, _, _) = self { return (200...299).contains(status) }
        return false
    }
}
