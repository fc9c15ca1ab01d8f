package import BridgeEvents
package import BridgeNATS
package import BridgeSystem
internal import Synchronization

/// The shared bucket as the sinks see it (`state.backend: jetstream`, docs/ARCHITECTURE.md "Shared state, lease and
/// fencing"). Sinks are built before the bridge has reached the bucket, so the runtime hands the bucket over here at
/// the start of each term of being active, before that term's sinks run; a sink reads it when it starts.
///
/// Dead letters go to the bucket (fenced, so a bridge another one took over from files nothing), and a webhook sink
/// lets the cursor move only once its outbox was answered: a failover loses nothing left on this machine.
package final class SharedSinkState: SinkState {
    /// One term's access to the bucket.
    package struct Term: Sendable {
        /// The bucket.
        package var store: KeyValueStore
        /// The keys of this bridge name.
        package var keys: SharedStateKeys
        /// The term's fenced writes (the keys its takeover moved).
        package var writer: any SharedTermWriter

        /// Creates a term's access.
        package init(store: KeyValueStore, keys: SharedStateKeys, writer: any SharedTermWriter) {
            self.store = store
            self.keys = keys
            self.writer = writer
        }
    }

    private let current = Mutex<Term?>(nil)

    /// Nothing handed over yet.
    package init() {}

    /// Hands over the bucket for the term about to start.
    package func begin(_ term: Term) { current.withLock { $0 = term } }

    /// The current term's access, nil before the first.
    package var term: Term? { current.withLock { $0 } }

    package var progressWaitsForDelivery: Bool { true }

    package func brokerDeadLetters(sink: String, outbox: OutboxStore, logger: Logger) -> any BrokerDeadLetters {
        SharedBrokerDeadLetters(
            filer: SharedDeadLetterFiler(sinkID: sink, shared: self, logger: logger), local: outbox, sink: sink)
    }

    package func webhookDeadLetters(sink: String, logger: Logger) -> any WebhookDeadLetterPlace {
        SharedDeadLetterFiler(sinkID: sink, shared: self, logger: logger)
    }
}
