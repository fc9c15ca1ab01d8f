internal import BridgeSystem

extension KafkaProducer {
    /// Produces `messages` and waits for every outcome (`submit` plus waiting for its completion).
    package func send(_ messages: [KafkaMessage]) async throws -> [KafkaDeliveryOutcome] {
        await Self.first(of: try await submitted(messages)) ?? []
    }

    /// `send`, waiting at most `limit` for the outcomes: nil when they did not come by then (a probe's test event).
    package func send(_ messages: [KafkaMessage], within limit: Duration) async throws -> [KafkaDeliveryOutcome]? {
        let outcomes = try await submitted(messages)
        return await withTimeLimit(limit) { await Self.first(of: outcomes) }
    }

    /// Submits `messages`; their outcomes arrive on the stream.
    private func submitted(_ messages: [KafkaMessage]) async throws -> AsyncStream<[KafkaDeliveryOutcome]> {
        let (stream, continuation) = AsyncStream<[KafkaDeliveryOutcome]>.makeStream(bufferingPolicy: .unbounded)
        try await submit(messages) { outcomes in
            continuation.yield(Array(outcomes))
            continuation.finish()
        }
        return stream
    }

    private static func first(of outcomes: AsyncStream<[KafkaDeliveryOutcome]>) async -> [KafkaDeliveryOutcome]? {
        for await batch in outcomes { return batch }
        return nil
    }
}
