import BridgeConfig
import BridgeJSON
import BridgeSystem
import BridgeTestSupport
import Foundation

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

/// Runs an `ActivityReader` against a `FakeDirectus` with a real cursor store and queue; the test plays the
/// dispatcher: it takes batches and records their progress (or not, to simulate a crash before acceptance).
final class ReaderHarness: @unchecked Sendable {
    // @unchecked: the stored properties are immutable after init and each is Sendable or only used by the test.
    let directus: FakeDirectus
    let directory: String
    let store: CursorStore
    let queue: EventQueue
    let wakeup = ActivityWakeup()
    let health = HealthState(expectedSubscriptions: [])
    let stop = ShutdownSignal()
    /// Triggered once the reader returned.
    let ended = ShutdownSignal()
    let reader: ActivityReader
    let registry = MetricsRegistry()
    private var task: Task<Void, Never>?

    init(
        directus: FakeDirectus,
        subscriptions: [ActivitySubscription],
        directory: String? = nil,
        pageSize: Int = 500,
        snapshotPageSize: Int = 500,
        gapTimeout: Duration = .seconds(30),
        pollInterval: Duration = .seconds(60),
        progressInterval: Duration = .milliseconds(1),
        // The log read after every snapshot page, so that every page carries its position (the bridge's 1 s, tried
        // in `SnapshotLogIntervalTests`, would leave a test's few pages without one).
        snapshotLogInterval: Duration = .zero,
        capacity: Int = 100_000,
        maxBytes: Int = 256 << 20,
        source: (any ActivitySource)? = nil,
        logger: Logger = .silent
    ) throws {
        self.directus = directus
        self.directory = try directory ?? TestEnvironment.makeTemporaryDirectory(prefix: "activity").path
        store = try CursorStore(directory: self.directory)
        queue = EventQueue(capacity: capacity, maxBytes: maxBytes)
        health.update { $0.connected = true }
        let store = self.store
        reader = ActivityReader(
            settings: ActivityReaderSettings(
                pollInterval: pollInterval,
                pageSize: pageSize,
                snapshotPageSize: snapshotPageSize,
                gapTimeout: gapTimeout,
                retryDelay: .milliseconds(5),
                maxRetryDelay: .milliseconds(20),
                progressInterval: progressInterval,
                snapshotLogInterval: snapshotLogInterval
            ),
            sinkID: "default",
            subscriptions: subscriptions,
            source: source ?? directus,
            store: store,
            queue: queue,
            wakeup: wakeup,
            health: health,
            metrics: ActivityMetrics(registry: registry) { store.cursor?.committed },
            pipelineMetrics: PipelineMetrics(registry: registry),
            logger: logger
        )
    }

    /// A state directory whose cursor and `articles` subscription start at activity id 0 (the reader then reads the
    /// whole log, as after an outage).
    static func stateFromTheStart() throws -> String {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "activity").path
        let store = try CursorStore(directory: directory)
        try store.startIfNew(at: 0)
        try store.save(SubscriptionCursorState(startID: 0), for: "articles")
        return directory
    }

    /// The reader and the harness's waits run here, not on Swift's cooperative pool: other suites running in
    /// parallel block that pool's two threads with synchronous waits, which would starve the reader and make
    /// every deadline below meaningless.
    static let executor = BlockingExecutor(name: "activity-tests")

    func start() {
        let reader = self.reader
        let (stop, ended) = (self.stop, self.ended)
        task = Task(executorPreference: Self.executor) {
            await reader.run(stop: stop)
            ended.trigger()
        }
    }

    /// Stops the reader and waits for it (a crash, as far as the cursor store can tell).
    func halt() async {
        stop.trigger()
        queue.close()
        await task?.value
    }

    /// Stops the reader as `run` does at SIGTERM: the queue stays open until the reader returned (the sink's runner
    /// drains it, here the harness takes and records every batch), then it is closed. Returns the batches taken.
    func stopCleanly(timeout: Duration = .seconds(10)) async throws -> [EventBatch] {
        stop.trigger()
        var taken: [EventBatch] = []
        let deadline = ContinuousClock.now + timeout
        while !ended.isTriggered && ContinuousClock.now < deadline {
            if let batch = try await next(timeout: .milliseconds(20)) { taken.append(batch) }
        }
        while let batch = try await next(timeout: .milliseconds(20)) { taken.append(batch) }
        queue.close()
        await task?.value
        return taken
    }

    /// Takes the next batch within `timeout`, recording its progress when `accept`.
    func next(accept: Bool = true, timeout: Duration = .seconds(2)) async throws -> EventBatch? {
        try await withTaskExecutorPreference(Self.executor) {
            let deadline = ContinuousClock.now + timeout
            repeat {
                if let batch = queue.take(timeout: .milliseconds(5)) {
                    if accept, let progress = batch.progress { try store.record(progress) }
                    return batch
                }
            } while ContinuousClock.now < deadline
            return nil
        }
    }

    /// Takes batches (recording them when `accept`) until `count` events arrived or `timeout` passed, then for
    /// `settle` more to catch any extra ones. Waits on conditions, not on the clock, so a loaded machine only
    /// makes it slower.
    func collect(
        _ count: Int,
        accept: Bool = true,
        timeout: Duration = .seconds(10),
        settle: Duration = .milliseconds(150)
    ) async throws -> [EncodedEvent] {
        try await withTaskExecutorPreference(Self.executor) {
            var events: [EncodedEvent] = []
            let deadline = ContinuousClock.now + timeout
            while events.count < count && ContinuousClock.now < deadline {
                if let batch = try await next(accept: accept, timeout: deadline - .now) { events += batch.events }
            }
            while let batch = try await next(accept: accept, timeout: settle) { events += batch.events }
            return events
        }
    }

    /// Waits until the reader has made its first read and caught up (what it reads next is `live`).
    func waitUntilCaughtUp(timeout: Duration = .seconds(10)) async throws {
        try await withTaskExecutorPreference(Self.executor) {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                let metrics = registry.render()
                let read = !metrics.contains("directus_bridge_activity_reads_total 0\n")
                if read && metrics.contains("directus_bridge_activity_backfilling 0") { return }
                try await Task.sleep(for: .milliseconds(2))
            }
        }
    }

    /// Waits until `condition` holds (checked every 2 ms) or `timeout` passes.
    func wait(timeout: Duration = .seconds(10), until condition: @Sendable () -> Bool) async throws {
        try await withTaskExecutorPreference(Self.executor) {
            let deadline = ContinuousClock.now + timeout
            while !condition() && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
        }
    }

    /// Records a `resync` of `uid` as `directus-bridge resync` does and hands it to the running reader, as the
    /// watcher does.
    func requestResync(_ uid: String) throws {
        try CursorDatabase(directory: directory, sinks: ["default"]).requestResync(of: uid, sinks: ["default"])
        reader.requestResync([uid])
    }
}

extension EncodedEvent {
    /// The event line as JSON.
    var json: JSONValue { (try? JSONValue.parse(body.bytes)) ?? .null }
}

/// An activity subscription on `collection` with primary key `id`.
func subscription(
    _ collection: String = "articles",
    uid: String? = nil,
    events: Set<ChangeEvent> = [.create, .update, .delete],
    fields: [String]? = nil,
    filtered: Bool = false,
    snapshot: Bool = false
) -> ActivitySubscription {
    // The fake evaluates its own filter closure; `filtered` tells the reader that the query has a filter.
    var members: [(key: String, value: QueryValue)] = []
    if let fields { members.append((key: "fields", value: .array(fields.map { .string($0) }))) }
    if filtered {
        members.append(
            (
                key: "filter",
                value: .object([(key: "status", value: .object([(key: "_eq", value: .string("published"))]))])
            )
        )
    }
    let query: QueryValue? = members.isEmpty ? nil : .object(members)
    return ActivitySubscription(
        uid: uid ?? collection,
        collection: collection,
        events: events,
        query: ItemQuery(collection: collection, primaryKey: "id", query: query),
        snapshot: snapshot
    )
}
