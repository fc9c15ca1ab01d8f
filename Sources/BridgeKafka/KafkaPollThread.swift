internal import BridgeSystem
internal import CRdKafka

/// An `rd_kafka_t` that may cross threads. librdkafka's calls on one handle are thread-safe (`rd_kafka_poll`,
/// `rd_kafka_flush`, `rd_kafka_metadata`, produce), except `rd_kafka_destroy`, which only the owning
/// `KafkaProducer` calls, once, after every other user has stopped (the swift-kafka-client
/// `SendableOpaquePointer` precedent).
struct KafkaHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// A thread of its own that serves librdkafka's callbacks (`rd_kafka_poll`) while the producing thread does not
/// (`KafkaReportServing`), so delivery reports never wait for, or occupy, Swift's cooperative pool.
final class KafkaPollThread {
    /// Who serves the reports: this thread, or the runner in its turn.
    let serving: KafkaReportServing
    private var thread: DetachedThread.Joinable?

    /// Starts polling `handle`; throws when the system refuses a thread.
    init(handle: KafkaHandle) throws(KafkaError) {
        serving = KafkaReportServing(handle: handle)
        do {
            // The thread holds `serving` until it returns: it outlives this object if need be.
            thread = try DetachedThread.startJoinable { [serving] in serving.runPollThread() }
        } catch {
            serving.destroyQueue()
            throw KafkaError(
                kind: error.isRetriable ? .retriable : .fatal,
                message: "could not start the delivery-report thread: \(error)")
        }
    }

    deinit { stop() }

    /// Stops serving and waits for the thread to end (`KafkaReportServing.stop`). Idempotent.
    func stop() {
        guard let thread else { return }
        serving.stop()
        thread.join()
        self.thread = nil
        serving.destroyQueue()
    }
}
