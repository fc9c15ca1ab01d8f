import BridgeSystem
import BridgeTestSupport
@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks
import Testing

/// One sink's runner: retries, filtering, durability before progress, and what a full sink does with live and
/// activity batches (docs/ARCHITECTURE.md "Independent sinks").
@Suite struct SinkRunnerTests {
    struct Harness {
        let registry = MetricsRegistry()
        let metrics: PipelineMetrics
        let inbox: SinkInbox
        let runner: SinkRunner

        init(
            _ sink: RecordingSink, recorder: RecordingRecorder? = nil, capacity: Int = 100, logger: Logger = .silent
        ) {
            metrics = PipelineMetrics(registry: registry)
            inbox = SinkInbox(
                sinkID: "id-" + sink.name, capacity: capacity, maxBytes: 256 << 20,
                registry: registry, pipelineMetrics: metrics, logger: .silent)
            runner = SinkRunner(
                sink: ConfiguredSink(id: "id-" + sink.name, connector: sink, filter: sink.filter), inbox: inbox,
                recorder: recorder, metrics: metrics, health: HealthState(expectedSubscriptions: []), logger: logger)
        }

        func metric(_ line: String) -> Bool { registry.render().contains(line + "\n") }
    }

    @Test func retriesAFailingSinkAndRecordsProgressOnlyAfterItIsDurable() async throws {
        let flaky = RecordingSink(name: "flaky")
        flaky.failuresLeft = 2
        let recorder = RecordingRecorder()
        let harness = Harness(flaky, recorder: recorder)
        harness.inbox.offer(EventBatch(events: [makeEvent(1), makeEvent(2)], progress: ActivityProgress(resolvedIDs: [7])))
        harness.inbox.queue.close()
        try await harness.runner.runOnOwnThread()
        #expect(flaky.accepted == ["evt_1", "evt_2"])
        #expect(flaky.durableCalls == 1 && flaky.connects == 1)
        #expect(recorder.recorded == [ActivityProgress(resolvedIDs: [7])])
        #expect(harness.metric(#"directus_bridge_sink_events_total{sink="id-flaky"} 2"#))
    }

    /// A sink slower than its input is full at every batch. Was: a warning and an "accepting again" per batch (139
    /// warnings in 80 s from one slow webhook in a scale run). Now the first wait warns, and the next ones are counted
    /// into the next warning, at most once a minute; every batch still waits and is taken.
    @Test func aSinkFullAtEveryBatchWarnsOnceAMinute() async throws {
        let slow = RecordingSink(name: "webhook")
        slow.fullEveryOtherCall = true
        let log = RecordingLogHandler()
        let recorder = RecordingRecorder()
        let harness = Harness(slow, recorder: recorder, logger: log.logger())
        for n in 1...5 {
            harness.inbox.offer(
                EventBatch(events: [makeEvent(n)], progress: ActivityProgress(resolvedIDs: [Int64(n)])))
        }
        harness.inbox.queue.close()
        try await harness.runner.runOnOwnThread()
        #expect(slow.accepted == (1...5).map { "evt_\($0)" })
        #expect(recorder.recorded.count == 5)
        let messages = log.all.map(\.message)
        #expect(messages.filter { $0 == "sink full, waiting at its cursor" }.count == 1, "\(messages)")
        #expect(messages.filter { $0 == "sink accepting again" }.count == 1, "\(messages)")
    }

    @Test func aFullSinkIsReportedAgainAfterAMinuteWithTheWaitsNotLogged() {
        var report = SinkFullReport()
        let start = ContinuousClock.now
        #expect(report.waitStarts(at: start) == 0)
        #expect(report.waitStarts(at: start + .seconds(1)) == nil)
        #expect(report.waitStarts(at: start + .seconds(59)) == nil)
        #expect(report.waitStarts(at: start + .seconds(61)) == 2)
        #expect(report.waitStarts(at: start + .seconds(62)) == nil)
        #expect(report.waitStarts(at: start + .seconds(200)) == 1)
    }

    @Test func takesOnlyWhatItsFilterPasses() async throws {
        let tagsOnly = RecordingSink(name: "tags", filter: EventFilter(collections: ["tags"]))
        let harness = Harness(tagsOnly)
        harness.inbox.offer(EventBatch(events: [makeEvent(1, collection: "tags"), makeEvent(2, event: .delete)]))
        harness.inbox.queue.close()
        try await harness.runner.runOnOwnThread()
        #expect(tagsOnly.accepted == ["evt_1"])
    }

    @Test func aPermanentFailureStopsWithoutRecordingProgress() async {
        let broken = RecordingSink(name: "stdout")
        broken.permanentFailure = true
        let recorder = RecordingRecorder()
        let harness = Harness(broken, recorder: recorder)
        harness.inbox.offer(EventBatch(events: [makeEvent(1)], progress: ActivityProgress(resolvedIDs: [1])))
        harness.inbox.queue.close()
        await #expect(throws: SinkError.self) { try await harness.runner.runOnOwnThread() }
        #expect(recorder.recorded.isEmpty)
    }

    @Test func aFullSinkDropsALiveBatchForItselfAndCountsIt() async throws {
        let full = RecordingSink(name: "webhook")
        full.fullLeft = 1
        let harness = Harness(full)
        harness.inbox.offer(EventBatch(events: [makeEvent(1), makeEvent(2)], mayDrop: true))
        harness.inbox.offer(EventBatch(events: [makeEvent(3)], mayDrop: true))
        harness.inbox.queue.close()
        try await harness.runner.runOnOwnThread()
        #expect(full.accepted == ["evt_3"])
        #expect(harness.metric(#"directus_bridge_sink_dropped_total{sink="id-webhook"} 2"#))
    }

    @Test func aFullSinkMakesAnActivityBatchWaitInsteadOfDroppingIt() async throws {
        let full = RecordingSink(name: "webhook")
        full.fullLeft = 3
        let recorder = RecordingRecorder()
        let harness = Harness(full, recorder: recorder)
        harness.inbox.offer(EventBatch(events: [makeEvent(1)], progress: ActivityProgress(resolvedIDs: [1])))
        harness.inbox.queue.close()
        try await harness.runner.runOnOwnThread()
        #expect(full.accepted == ["evt_1"])
        #expect(recorder.recorded == [ActivityProgress(resolvedIDs: [1])])
        #expect(harness.metric(#"directus_bridge_sink_dropped_total{sink="id-webhook"} 0"#))
    }

    /// A snapshot or resync page before the last carries no progress, yet must wait like every batch an activity
    /// reader hands over: a full sink once dropped such pages as if they were live (issue "Nothing lost, proven").
    @Test func aFullSinkMakesASnapshotPageWithoutProgressWait() async throws {
        let full = RecordingSink(name: "webhook")
        full.fullLeft = 3
        full.takesWhenFull = 1
        let recorder = RecordingRecorder()
        let harness = Harness(full, recorder: recorder)
        harness.inbox.offer(EventBatch(events: (1...3).map { makeEvent($0) }))
        let done = ActivityProgress(completedSnapshots: ["articles": 40])
        harness.inbox.offer(EventBatch(events: [makeEvent(4)], progress: done))
        harness.inbox.queue.close()
        try await harness.runner.runOnOwnThread()
        #expect(full.accepted == ["evt_1", "evt_2", "evt_3", "evt_4"])
        #expect(recorder.recorded == [done])
        #expect(harness.metric(#"directus_bridge_sink_dropped_total{sink="id-webhook"} 0"#))
    }

    /// A snapshot page's position is recorded once what the sink took is durable, but not page by page while more
    /// pages wait in the inbox (a `makeDurable` and a `cursor.db` transaction each): the last one is, before the sink
    /// is closed (DeferredSnapshotPositions).
    @Test func snapshotPagesQueuedBehindEachOtherRecordTheirLastPositionOnce() async throws {
        let sink = RecordingSink(name: "pages")
        let recorder = RecordingRecorder()
        let harness = Harness(sink, recorder: recorder)
        let positions = (1...3).map {
            SnapshotPosition(watermark: 40, after: "\($0 * 2)", lines: Int64($0 * 2), run: 1, collection: "articles")
        }
        for (page, position) in positions.enumerated() {
            harness.inbox.offer(
                EventBatch(
                    events: [makeEvent(page * 2 + 1), makeEvent(page * 2 + 2)],
                    progress: ActivityProgress(snapshotPositions: ["articles": position])))
        }
        harness.inbox.queue.close()
        try await harness.runner.runOnOwnThread()
        #expect(sink.accepted.count == 6)
        #expect(recorder.recorded == [ActivityProgress(snapshotPositions: ["articles": positions[2]])])
        #expect(sink.durableCalls == 1)
    }

    /// A snapshot page's position is held when the inbox is empty too (a sink that keeps up with the snapshot, as
    /// NDJSON does, finds it empty at almost every page), and the runner's wait for its next batch is cut to when the
    /// oldest held position is a second old: then it is recorded, batch or not. Before: a page delivered to an empty
    /// inbox was recorded at once, a `cursor.db` transaction per page (BENCHMARKS.md, "Snapshot CPU against the
    /// pre-resume binary").
    @Test func aPositionIsHeldWhenTheInboxIsEmptyAndRecordedWithinASecond() {
        var deferred = DeferredSnapshotPositions()
        let start = ContinuousClock.now
        func page(_ after: String) -> ActivityProgress {
            ActivityProgress(snapshotPositions: [
                "articles": SnapshotPosition(watermark: 40, after: after, lines: 2, run: 1, collection: "articles")
            ])
        }
        #expect(deferred.longestWait(.seconds(1), now: start) == .seconds(1), "nothing held")
        let first = deferred.hold(page("2"), now: start)
        #expect(first, "held with the inbox empty")
        #expect(deferred.longestWait(.seconds(1), now: start + .milliseconds(400)) == .milliseconds(600))
        let second = deferred.hold(page("4"), now: start + .milliseconds(900))
        let third = deferred.hold(page("6"), now: start + .seconds(1))
        #expect(second && !third, "the oldest held position is a second old")
        #expect(deferred.longestWait(.seconds(1), now: start + .seconds(2)) == .zero)
        let recorded = deferred.taking(into: ActivityProgress())
        #expect(recorded.snapshotPositions["articles"]?.after == "4")
        #expect(deferred.isEmpty && deferred.longestWait(.seconds(1), now: start) == .seconds(1))
    }

    /// Positions held while pages followed go with the next progress that is recorded, after its `makeDurable`; the
    /// batch's own position would win over a held one of the same subscription.
    @Test func heldSnapshotPositionsAreRecordedWithTheNextProgress() async throws {
        let sink = RecordingSink(name: "pages")
        let recorder = RecordingRecorder()
        let harness = Harness(sink, recorder: recorder)
        let first = SnapshotPosition(watermark: 40, after: "2", lines: 2, run: 1, collection: "articles")
        let second = SnapshotPosition(watermark: 40, after: "4", lines: 4, run: 1, collection: "articles")
        harness.inbox.offer(
            EventBatch(events: [makeEvent(1)], progress: ActivityProgress(snapshotPositions: ["articles": first])))
        harness.inbox.offer(
            EventBatch(events: [makeEvent(2)], progress: ActivityProgress(snapshotPositions: ["articles": second])))
        harness.inbox.offer(EventBatch(events: [makeEvent(3)], progress: ActivityProgress(resolvedIDs: [41])))
        harness.inbox.queue.close()
        try await harness.runner.runOnOwnThread()
        #expect(
            recorder.recorded == [ActivityProgress(resolvedIDs: [41], snapshotPositions: ["articles": second])],
            "\(recorder.recorded)")
        #expect(sink.durableCalls == 1)
    }

    /// A sink that fills up inside a batch (the webhook outbox reaching `max_outbox`) keeps what it took: a live
    /// batch drops only the rest, an activity batch offers only the rest again, so nothing is taken twice.
    @Test func aSinkFullInsideABatchKeepsItsPrefixAndGetsOrDropsOnlyTheRest() async throws {
        let live = RecordingSink(name: "live")
        live.fullLeft = 1
        live.takesWhenFull = 2
        let liveHarness = Harness(live)
        liveHarness.inbox.offer(EventBatch(events: (1...5).map { makeEvent($0) }, mayDrop: true))
        liveHarness.inbox.queue.close()
        try await liveHarness.runner.runOnOwnThread()
        #expect(live.accepted == ["evt_1", "evt_2"])
        #expect(liveHarness.metric(#"directus_bridge_sink_dropped_total{sink="id-live"} 3"#))

        let activity = RecordingSink(name: "activity")
        activity.fullLeft = 1
        activity.takesWhenFull = 2
        let recorder = RecordingRecorder()
        let activityHarness = Harness(activity, recorder: recorder)
        activityHarness.inbox.offer(
            EventBatch(events: (1...5).map { makeEvent($0) }, progress: ActivityProgress(resolvedIDs: [5])))
        activityHarness.inbox.queue.close()
        try await activityHarness.runner.runOnOwnThread()
        #expect(activity.accepted == ["evt_1", "evt_2", "evt_3", "evt_4", "evt_5"])
        #expect(recorder.recorded == [ActivityProgress(resolvedIDs: [5])])
    }

    @Test func aFullInboxDropsForItsSinkAloneWhileTheOthersGetTheBatch() {
        let registry = MetricsRegistry()
        let metrics = PipelineMetrics(registry: registry)
        let small = SinkInbox(
            sinkID: "small", capacity: 1, maxBytes: 256 << 20, registry: registry,
            pipelineMetrics: metrics, logger: .silent)
        let large = SinkInbox(
            sinkID: "large", capacity: 100, maxBytes: 256 << 20, registry: registry,
            pipelineMetrics: metrics, logger: .silent)
        let sinks = SinkFanOut([small, large])
        sinks.offer(EventBatch(events: [makeEvent(1)]))
        sinks.offer(EventBatch(events: [makeEvent(2), makeEvent(3)]))
        #expect(small.queue.depth == 1)
        #expect(large.queue.depth == 3)
        let text = registry.render()
        #expect(text.contains(#"directus_bridge_sink_dropped_total{sink="small"} 2"# + "\n"))
        #expect(text.contains(#"directus_bridge_sink_dropped_total{sink="large"} 0"# + "\n"))
    }
}
