package import BridgeHTTP
internal import Synchronization

/// Finished engine attempts waiting for the delivery loop (filed on the engine's driver thread), and whether the
/// loop is to be woken for them now.
///
/// Waking the loop at every driver turn cost a thread wake-up per one or two deliveries at 8 in flight (a futex on
/// the driver's thread, between a response and the next request, and a switch and a turn on the loop's), while the
/// engine still had the next attempts queued. The loop needs a filing at once only when the engine may run out of
/// queued attempts (at most 2 × `maxInFlight` outstanding: fewer than `maxInFlight` queued behind the running ones),
/// when an attempt did not get a 2xx (a failing receiver stops the queueing ahead, see
/// `WebhookDeliveryService.attemptLimit`), or once `maxInFlight` outcomes wait. Otherwise outcomes wait for one of
/// those, and never longer than `commitDelay`: while they may be held back the loop's own timer wakes it at least
/// that often (`WebhookDeliveryService.Loop.waitTime`) — the same bound the group commit gives an outcome already.
package final class CompletionInbox: Sendable {
    private let list = Mutex<[DeliveryReceiver.Completion]>([])
    private let outstandingCount = Atomic<Int>(0)
    /// Outcomes that are handed over at once however young (`maxInFlight`).
    private let batch: Int

    /// An inbox for a loop that keeps up to `maxInFlight` attempts running.
    package init(maxInFlight: Int) {
        batch = max(1, maxInFlight)
    }

    /// Attempts handed to the engine whose outcome has not been filed yet.
    package var outstanding: Int { outstandingCount.load(ordering: .relaxed) }

    /// Whether a filing may be held back without waking the loop right now (see the type's comment).
    package var mayHoldBack: Bool { outstanding > 2 * batch }

    /// The loop hands `count` attempts to the engine; called before the engine can answer any of them.
    package func handedOut(_ count: Int) {
        outstandingCount.add(count, ordering: .relaxed)
    }

    /// Files a driver turn's outcomes; returns whether the loop must be woken for them now.
    package func file(_ completions: [DeliveryReceiver.Completion]) -> Bool {
        let left = outstandingCount.subtract(completions.count, ordering: .relaxed).newValue
        let waiting = list.withLock { list in
            list.append(contentsOf: completions)
            return list.count
        }
        return waiting >= batch || left <= 2 * batch || completions.contains { !$0.isSuccess }
    }

    /// Takes every outcome filed so far, in filing order.
    package func take() -> [DeliveryReceiver.Completion] {
        list.withLock { list in
            defer { list.removeAll(keepingCapacity: true) }
            return list
        }
    }
}

extension DeliveryReceiver.Completion {
    /// A 2xx answer: nothing for the loop to do at once.
    fileprivate var isSuccess: Bool {
        if case .success(let response) = result { return (200...299).contains(response.status) }
        return false
    }
}
