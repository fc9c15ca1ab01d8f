#if canImport(Glibc)
@preconcurrency import Glibc
#endif
public import BridgeSystem
import Synchronization

/// Records activity-log progress once a batch is accepted by every sink (the cursor store).
public protocol ProgressRecorder: AnyObject {
    /// Makes `progress` durable.
    func record(_ progress: ActivityProgress) throws
}

/// Moves batches from the queue to every sink on one dedicated thread, then records their progress.
///
/// A sink that fails with a retriable error is retried (only that sink; sinks that took the batch are not offered
/// it again) with a growing pause, while the queue fills up behind it: live mode then drops at the queue, activity
/// mode waits at its cursor. A non-retriable failure (stdout closed) stops the dispatcher with that error, and so
/// does `abandon` (the forced phase of a shutdown): retries end, and what is not accepted stays unrecorded.
package final class Dispatcher: @unchecked Sendable {
    // @unchecked: sinks and the recorder are touched only by the dispatcher thread (`run`); the flags are atomics.
    private let queue: EventQueue
    private let sinks: [ConfiguredSink]
    private let abandoned = ShutdownSignal()
    private let recorder: (any ProgressRecorder)?
    private let logger: Logger
    private let metrics: PipelineMetrics
    private let health: HealthState
    private let reopenRequested = Atomic<Bool>(false)
    private let stuckAfter: Duration

    /// Creates a dispatcher; call `run()` on a thread of its own.
    package init(
        queue: EventQueue, sinks: [ConfiguredSink], recorder: (any ProgressRecorder)?, metrics: PipelineMetrics,
        health: HealthState, logger: Logger, stuckAfter: Duration = .seconds(30)
    ) {
        self.queue = queue
        self.sinks = sinks
        self.recorder = recorder
        self.metrics = metrics
        self.health = health
        self.logger = logger
        self.stuckAfter = stuckAfter
    }

    /// Asks the dispatcher to reopen file sinks (SIGHUP) before its next batch.
    package func requestReopen() { reopenRequested.store(true, ordering: .relaxed) }

    /// Ends every retry at once (the forced phase of a shutdown): `run` throws `Abandoned` at its next retry.
    package func abandon() { abandoned.trigger() }

    /// Thrown by `run` after `abandon`.
    package struct Abandoned: Error, CustomStringConvertible {
        package var description: String { "sink retries abandoned at shutdown" }
    }

    /// Connects the sinks, then runs until the queue is closed and drained, then closes the sinks. Throws a
    /// non-retriable sink error, or `Abandoned`.
    package func run() throws {
        defer { closeSinks() }
        for sink in sinks {
            try retrying(what: sink.name) { try sink.connector.connect() }
        }
        while true {
            if reopenRequested.exchange(false, ordering: .relaxed) { reopenSinks() }
            guard let batch = queue.take(timeout: .milliseconds(250)) else {
                if queue.isClosedAndEmpty { return }
                try tickSinks()
                continue
            }
            try deliver(batch)
            try tickSinks()
        }
    }

    private func deliver(_ batch: EventBatch) throws {
        var touched: [ConfiguredSink] = []
        for sink in sinks {
            let events = sink.filter.passesEverything ? batch.events : batch.events.filter(sink.filter.matches)
            guard !events.isEmpty else { continue }
            try deliver(events, to: sink)
            touched.append(sink)
        }
        if let progress = batch.progress, !progress.isEmpty, let recorder {
            // The cursor may only move past events that are on disk in every sink (at-least-once).
            for sink in touched {
                try retrying(what: sink.name) { try sink.connector.makeDurable() }
            }
            try retrying(what: "cursor store") { try recorder.record(progress) }
        }
        metrics.emitted(batch.events, now: Timestamp.now())
        metrics.observeLatency(since: batch.receivedAt)
    }

    private func deliver(_ events: [EncodedEvent], to sink: ConfiguredSink) throws {
        try retrying(what: sink.name) { try sink.connector.accept(events) }
    }

    /// Runs `body` until it succeeds; retriable failures pause 100 ms doubling to 5 s, and mark the sink stuck
    /// in readiness after `stuckAfter`.
    private func retrying(what: String, _ body: () throws -> Void) throws {
        var pause = Duration.milliseconds(100)
        var failingSince: ContinuousClock.Instant?
        while true {
            if abandoned.isTriggered { throw Abandoned() }
            do {
                try body()
                if failingSince != nil {
                    logger.info("sink accepting again", metadata: [LogKey.sink: what])
                    health.update { $0.stuckSinks[what] = nil }
                }
                return
            } catch let error as SinkError where !error.isRetriable {
                logger.error("sink failed permanently", metadata: [LogKey.sink: what, LogKey.error: error.message])
                throw error
            } catch {
                // A full sink (webhook `max_outbox`) is not broken: intake pauses (live mode drops at the queue,
                // activity mode waits at its cursor), polled every 100 ms, without counting retries.
                let full = (error as? SinkError).flatMap { $0.isBackpressure ? $0 : nil }
                let backpressure = full != nil
                let reason = full?.message ?? "\(error)"
                let now = ContinuousClock.now
                if failingSince == nil {
                    failingSince = now
                    if backpressure {
                        logger.warning("sink full, intake paused", metadata: [LogKey.sink: what, LogKey.error: reason])
                    } else {
                        logger.error("sink failed, retrying", metadata: [LogKey.sink: what, LogKey.error: reason])
                    }
                }
                if let since = failingSince, now - since >= stuckAfter {
                    health.update { $0.stuckSinks[what] = reason }
                }
                if backpressure {
                    abandoned.pause(for: .milliseconds(100))
                    continue
                }
                metrics.sinkRetried()
                abandoned.pause(for: pause)
                pause = min(pause * 2, .seconds(5))
            }
        }
    }

    private func tickSinks() throws {
        let now = ContinuousClock.now
        for sink in sinks {
            try retrying(what: sink.name) { try sink.connector.tick(now: now) }
        }
    }

    private func reopenSinks() {
        for sink in sinks {
            do {
                try sink.connector.reopen()
            } catch {
                logger.error("reopen failed", metadata: [LogKey.sink: sink.name, LogKey.error: "\(error)"])
            }
        }
        logger.info("reopened output files")
    }

    private func closeSinks() {
        for sink in sinks {
            do {
                try sink.connector.close()
            } catch {
                logger.error("closing sink failed", metadata: [LogKey.sink: sink.name, LogKey.error: "\(error)"])
            }
        }
    }
}
