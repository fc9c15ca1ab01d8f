internal import BridgeSystem
import Synchronization

/// What librdkafka's callbacks reach through the configuration's opaque pointer: the bound on outstanding
/// messages, the producer's health, its logger.
///
/// The callbacks run on librdkafka's threads and on the producer's poll thread; they only update this state and
/// wake a waiting `submit`, never block.
final class KafkaProducerContext: Sendable {
    private struct Flow {
        var outstanding = 0
        var limit: Int
        var capacityWaiter: CheckedContinuation<Void, Never>?
        var lastError: KafkaError?
        var delivered: UInt64 = 0
        var failed: UInt64 = 0
    }

    /// The flow.
    private let flow: Mutex<Flow>
    /// Where librdkafka's log lines and cluster errors go (debug and below; the sink decides what to warn about).
    let logger: Logger
    /// Hides secret property values in librdkafka's text.
    let redactor: Redactor

    init(limit: Int, logger: Logger, redactor: Redactor) {
        self.flow = Mutex(Flow(limit: max(1, limit)))
        self.logger = logger
        self.redactor = redactor
    }

    // MARK: - Outstanding messages

    /// Takes up to `wanted` slots for messages about to be produced; 0 when the bound is reached.
    func reserve(upTo wanted: Int) -> Int {
        flow.withLock { flow in
            let granted = max(0, min(wanted, flow.limit - flow.outstanding))
            flow.outstanding += granted
            return granted
        }
    }

    /// Gives back `count` reserved slots whose messages librdkafka never took.
    func unreserve(_ count: Int) {
        let waiter = flow.withLock { flow in
            flow.outstanding -= count
            return takeWaiterIfRoom(&flow)
        }
        waiter?.resume()
    }

    /// librdkafka's own queue was full at `outstanding` messages: lower the bound to what it holds.
    func capacityReached() {
        flow.withLock { flow in flow.limit = max(1, min(flow.limit, flow.outstanding)) }
    }

    /// Waits until a slot is free; returns at once when cancelled (the caller checks cancellation).
    func waitForCapacity() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = flow.withLock { flow -> Bool in
                    if flow.outstanding < flow.limit || Task.isCancelled { return true }
                    precondition(flow.capacityWaiter == nil, "KafkaProducer.submit called concurrently")
                    flow.capacityWaiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = flow.withLock { flow in
                defer { flow.capacityWaiter = nil }
                return flow.capacityWaiter
            }
            waiter?.resume()
        }
    }

    /// Whether a quarter of the bound is free (a thread serving the reports itself produces again then).
    var hasRoomForChunk: Bool { flow.withLock { Self.hasRoomForChunk($0) } }

    /// A delivery report arrived: one slot is free again, and the counters move.
    func reported(delivered: Bool, error: KafkaError?) {
        let waiter = flow.withLock { flow in
            flow.outstanding -= 1
            if delivered {
                flow.delivered &+= 1
                flow.lastError = nil
            } else {
                flow.failed &+= 1
            }
            return takeWaiterIfRoom(&flow)
        }
        waiter?.resume()
    }

    /// A message failed before librdkafka took it (no slot was used).
    func countFailedBeforeProduce() {
        flow.withLock { $0.failed &+= 1 }
    }

    /// The waiting `submit`'s task to resume once a quarter of the bound is free, so it produces in chunks rather
    /// than one message per delivery report.
    private func takeWaiterIfRoom(_ flow: inout Flow) -> CheckedContinuation<Void, Never>? {
        guard Self.hasRoomForChunk(flow) else { return nil }
        defer { flow.capacityWaiter = nil }
        return flow.capacityWaiter
    }

    private static func hasRoomForChunk(_ flow: Flow) -> Bool {
        flow.outstanding <= flow.limit - (flow.limit + 3) / 4
    }

    // MARK: - Health

    /// librdkafka reported a cluster-level error (all brokers down, authentication, a fatal error).
    func recordClusterError(_ error: KafkaError) {
        flow.withLock { $0.lastError = error }
        logger.debug(
            "Kafka cluster error",
            metadata: [LogKey.error: redactor.redact(error.description)]
        )
    }

    /// A snapshot of the producer's health.
    var status: KafkaProducerStatus {
        flow.withLock { flow in
            KafkaProducerStatus(
                lastError: flow.lastError,
                outstanding: flow.outstanding,
                delivered: flow.delivered,
                failed: flow.failed
            )
        }
    }
}
