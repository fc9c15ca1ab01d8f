internal import BridgeEvents
internal import BridgeSystem

extension WebhookDeliveryService {
    /// Takes the rows the sink handed over since the last turn. A row above `scannedSeq` is new and taken with its
    /// body. A row at or below it was read from SQLite while its record was on the way here (a read asked for while
    /// intake committed): it takes its body from the record, unless it finished already, so its body is not read
    /// back as well — intake hands each batch over before it lets go of the store's lock, so a read that finds a row
    /// always finds its record queued here, taken in the next turn, before the row can be due.
    ///
    /// At start, and once a batch was refused (the records taken now all came before it and are kept), rows are
    /// read from SQLite in `seq` order until the reads come back short (`catchingUp`): the bodies of new rows the
    /// hand-off brings meanwhile are kept aside until the read reaches their rows (`WebhookDeliveryState.keepAside`),
    /// counted against the hand-off's bound like the rest.
    func takeHandOff(_ loop: inout Loop) {
        let handed = handOff.take()
        defer {
            if handed.refused {
                loop.catchingUp = true
                loop.loadAfter = loop.scannedSeq
                loop.readCauses.insert(.refused)
            }
            handOff.holding(loop.state.heldBytes)
        }
        guard let first = handed.records.first else { return }
        let scanned = loop.scannedSeq
        if first.entry.seq <= scanned {
            let adopted = loop.state.adopt(handed.records.lazy.filter { $0.entry.seq <= scanned })
            if adopted > 0 { reads.tookBodiesFromHandOff(adopted) }
        }
        let new = first.entry.seq > scanned ? handed.records : handed.records.filter { $0.entry.seq > scanned }
        if loop.catchingUp { loop.state.keepAside(new) } else { loop.state.take(new) }
    }

    /// Counts a store step's read and logs it at debug level (a read is rare: a start, a poll, a replay, a full
    /// hand-off; the bodies of rows read there).
    func recordRead(_ causes: OutboxReadCause, step: OutboxStep) {
        reads.read(causes, rows: step.loaded.count, bodies: step.payloads.count)
        logger.debug(
            "webhook outbox read back from SQLite",
            metadata: [
                LogKey.sink: sinkID, LogKey.reason: causes.names, LogKey.count: step.loaded.count,
                LogKey.outboxBodiesRead: step.payloads.count,
            ]
        )
    }
}
