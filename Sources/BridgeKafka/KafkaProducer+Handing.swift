extension KafkaProducer {
    /// One `submit` call's progress: how many messages, their batch, and the index of the next to hand over.
    struct Handing {
        let count: Int
        let batch: KafkaDeliveryBatch
        var next = 0
        /// The message being handed over, overwritten by the next (`submitBlocking(count:message:completion:)`).
        var message = KafkaMessage(topic: "", key: "", value: [])

        init(count: Int, completion: @escaping @Sendable (KafkaDeliveryOutcomes) -> Void) {
            self.count = count
            self.batch = KafkaDeliveryBatch(count: count, completion: completion)
            batch.completeIfEmpty()
        }

        var isDone: Bool { next == count }

        /// Whatever was not handed over (cancelled) still gets its outcome, so the completion runs.
        mutating func finishUnsent() {
            while next < count {
                batch.record(
                    .failed(KafkaError(kind: .retriable, message: "not sent: the producer was stopped")),
                    at: next
                )
                next += 1
            }
        }
    }
}
