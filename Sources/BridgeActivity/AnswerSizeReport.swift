package import BridgeSystem
internal import BridgeEvents
internal import BridgeDirectus

extension ActivityMetrics {
    /// Logs and counts what the REST source tells about answer sizes: a split read at debug level (it costs requests,
    /// not data), a part left out at error level with the collection, the keys and the reason (docs/ARCHITECTURE.md
    /// "Answers too large": nothing is lost silently).
    package func report(_ event: AnswerSizeEvent, logger: Logger) {
        switch event {
        case .split(let operation, let keys):
            oversizedAnswers.increment()
            logger.debug(
                "REST answer over the size limit; reading fewer keys per request",
                metadata: ["operation": operation, LogKey.count: keys]
            )
        case .omitted(let omitted):
            omittedForSize.increment(by: UInt64(omitted.keys.count))
            let shown = omitted.keys.prefix(10).joined(separator: ",") + (omitted.keys.count > 10 ? ",…" : "")
            var metadata: LogMetadata = [
                "part": omitted.part, "keys": shown, LogKey.count: omitted.keys.count,
                "reason": "the answer for one item alone is over \(omitted.limit) bytes",
            ]
            if let collection = omitted.collection { metadata[LogKey.collection] = collection }
            logger.error("too large to read even alone; the line goes out without it", metadata: metadata)
        }
    }
}
