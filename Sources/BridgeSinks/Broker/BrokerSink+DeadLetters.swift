internal import BridgeEvents
internal import BridgeSystem

// MARK: - Dead letters: what the broker refused, and what `dlq replay` hands back (on the runner's thread)

extension BrokerSink {
    /// Stores what the broker refused as dead letters (a failure is retriable: the refusals wait, and so does the
    /// cursor), and removes the replayed letters it delivered from the store (a failure only logs: such a letter is
    /// sent once more, with its id, by a later run).
    func storeDeadLetters(now: ContinuousClock.Instant) throws(SinkError) {
        defer { deadLetterLog.flush(now: now) { logDeadLettersHeldBack($0) } }
        let refused = tracker.refusals
        if !refused.isEmpty {
            let deadAt = Timestamp.now().unixMilliseconds
            let letters = refused.map { refusal in
                RefusedLetter(
                    letter: DeadLetter(
                        refused: refusal.event, sink: deadLetters.sink, reason: refusal.reason, deadAt: deadAt,
                        replay: refusal.replay),
                    replay: refusal.replay)
            }
            do {
                try deadLetters.file(letters)
            } catch {
                throw SinkError(
                    sink: name, message: "events the broker refused cannot be stored as dead letters: \(error)",
                    isRetriable: true)
            }
            tracker.dropRefusals(refused.count)
            metrics?.deadLetters.increment(by: UInt64(refused.count))
            for refusal in refused {
                deadLetterLog.log(now: now) {
                    logger.error(
                        "the broker refused an event for good; stored as a dead letter (directus-bridge dlq replay "
                            + "sends it again)",
                        metadata: [
                            LogKey.eventID: refusal.event.id, LogKey.collection: refusal.event.collection,
                            LogKey.error: refusal.reason,
                        ])
                } total: { logDeadLettersHeldBack($0) }
            }
        }
        let delivered = tracker.deliveredReplays
        guard !delivered.isEmpty else { return }
        do {
            try deadLetters.delivered(delivered)
            logger.info("replayed dead letters delivered", metadata: [LogKey.count: delivered.count])
        } catch {
            logger.warning(
                "replayed dead letters were delivered but could not be removed; a later run sends them once more",
                metadata: [LogKey.count: delivered.count, LogKey.error: "\(error)"])
        }
        tracker.dropDeliveredReplays(delivered.count)
    }

    /// The total of dead letters `deadLetterLog` kept from the log in a window.
    func logDeadLettersHeldBack(_ count: Int) {
        logger.error(
            "more events the broker refused were stored as dead letters than logged one by one (directus-bridge dlq "
                + "list shows each)",
            metadata: [LogKey.count: count])
    }

    /// Every `replayPoll`, while nothing waits to be sent (again): hands the letters `dlq replay` gave back to the
    /// client, as many as there is room for.
    func takeReplays(now: ContinuousClock.Instant) async throws(SinkError) {
        guard now >= replayPollAt, waiting.isEmpty, tracker.redoCount == 0 else { return }
        replayPollAt = now + settings.replayPoll
        let room = settings.maxOutstanding - tracker.pending
        guard room > 0 else { return }
        let letters: [DeadLetter]
        do {
            letters = try deadLetters.takeReplays(limit: room)
            if replaysFailing { logger.info("replayed dead letters readable again") }
            replaysFailing = false
        } catch {
            if !replaysFailing {
                logger.warning(
                    "cannot read the replayed dead letters; trying again at the next poll",
                    metadata: [LogKey.error: "\(error)"])
            }
            replaysFailing = true
            return
        }
        guard !letters.isEmpty else { return }
        logger.info("replayed dead letters handed to the broker", metadata: [LogKey.count: letters.count])
        tracker.watch(letters)
        waiting = ArraySlice(letters.map(\.replayedEvent))
        try await feed()
    }
}
