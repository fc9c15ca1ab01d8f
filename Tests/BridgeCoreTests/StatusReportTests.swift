import BridgeActivity
import BridgeConfig
import BridgeJSON
import BridgeSinks
import Testing

@testable import BridgeCore

/// `status` words what another process's `/metrics` says: whatever numbers it serves (NaN, infinities, values
/// beyond any integer — a broken bridge, or another service on that port), the report is written, never trapped on.
@Suite struct StatusReportTests {
    static let config = load(
        sinks: """
              - type: ndjson
              - type: webhook
                url: http://127.0.0.1:9/hook
            """
    )

    /// A config reading `articles` in activity mode, with `sinks` (YAML lines under `sinks:`).
    static func load(sinks: String) -> BridgeConfig {
        let yaml = """
            directus:
              url: http://127.0.0.1:8055
              auth:
                token: t
            subscriptions:
              - collection: articles
            delivery:
              mode: activity
            sinks:

            """ + sinks
        guard
            case .success(let config) = ConfigLoader.parse(
                text: yaml,
                path: "bridge.yaml",
                environment: [:],
                sinkTypes: SinkCatalog.configTypes
            )
        else { preconditionFailure("the test's config does not load") }
        return config
    }

    @Test(arguments: ["NaN", "+Inf", "-Inf", "1e300", "-1e300", "9.3e18"])
    func hostileMetricValuesAreWordedWithoutTrapping(value: String) throws {
        let ids = SinkCatalog.identities(of: Self.config.sinks)
        var series = [
            "directus_bridge_activity_head", "directus_bridge_activity_lag_rows",
            "directus_bridge_activity_backfilling",
        ].map { "\($0) \(value)" }
        let sinkSeries = [
            "directus_bridge_sink_cursor", "directus_bridge_sink_lag_rows", "directus_bridge_backfill_done_events",
            "directus_bridge_backfill_rate_events_per_second", "directus_bridge_backfill_eta_seconds",
            "directus_bridge_webhook_outbox_depth", "directus_bridge_webhook_dead_letter_depth",
            "directus_bridge_sink_dropped_total",
        ]
        let snapshotSeries = [
            "directus_bridge_snapshot_done_items", "directus_bridge_snapshot_expected_items",
            "directus_bridge_snapshot_rate_items_per_second", "directus_bridge_snapshot_eta_seconds",
        ]
        for id in ids {
            for name in sinkSeries { series.append("\(name){sink=\"\(id)\"} \(value)") }
            series.append("directus_bridge_backfill_running{sink=\"\(id)\"} 1")
            for name in snapshotSeries {
                series.append("\(name){subscription=\"articles\",sink=\"\(id)\"} \(value)")
            }
            series.append("directus_bridge_snapshot_running{subscription=\"articles\",sink=\"\(id)\"} 1")
        }
        let metrics = MetricSamples(text: series.joined(separator: "\n"))
        #expect(metrics.samples.count == series.count)
        let report = StatusReport(
            config: Self.config,
            stored: StoredState(),
            service: .running(url: "http://127.0.0.1:9464", metrics: metrics, ready: true, readiness: "{}")
        )
        let lines = report.lines
        #expect(lines.count == 3 + 1 + 2, "\(lines)")
        #expect(lines.contains { $0.contains("snapshot running") }, "\(lines)")
        // `status --json` stays valid JSON: a rate or estimate that is not finite is null, counts saturate.
        let json = report.json
        #expect(try JSONValue.parse(json.serializedString()) == json)
        let rate = json["sinks"]?[0]?["backfill"]?["rate_per_second"]
        let notFinite = value.hasSuffix("Inf") || value == "NaN"
        #expect((rate == .null) == notFinite, "\(String(describing: rate))")
    }

    /// A snapshot whose every item was read while its sink is full (Redis at maxmemory held 28,003 of 50,003 back)
    /// said "50003 of 50003 items (100 %)": the progress counts items read, which the line now says, and that the
    /// rest waits for the sink.
    @Test func aSnapshotReadToItsEndIsNotWordedAsDone() throws {
        let id = SinkCatalog.identities(of: Self.config.sinks)[0]
        let labels = "{subscription=\"articles\",sink=\"\(id)\"}"
        let metrics = MetricSamples(
            text: [
                "directus_bridge_snapshot_running\(labels) 1", "directus_bridge_snapshot_done_items\(labels) 50003",
                "directus_bridge_snapshot_expected_items\(labels) 50003",
            ].joined(separator: "\n")
        )
        let report = StatusReport(
            config: Self.config,
            stored: StoredState(),
            service: .running(url: "http://127.0.0.1:9464", metrics: metrics, ready: false, readiness: "{}")
        )
        let line = report.lines.first { $0.contains("snapshot running") } ?? "\(report.lines)"
        #expect(line.contains("50003 of 50003 items read (100 %), waiting until the sink holds them all"), "\(line)")
    }

    /// A `resync` beside a snapshot that waits for a full sink: until the running bridge takes it, the line says so
    /// beside the running snapshot; once taken, the running snapshot is the new one, named by its watermark.
    @Test func aRunningSnapshotNamesItsWatermarkAndAResyncNotTakenYet() throws {
        let ids = SinkCatalog.identities(of: Self.config.sinks)
        let metrics = MetricSamples(
            text: ids.map { "directus_bridge_snapshot_running{subscription=\"articles\",sink=\"\($0)\"} 1" }
                .joined(separator: "\n")
        )
        let report = { (saved: SubscriptionCursorState) in
            StatusReport(
                config: Self.config,
                stored: StoredState(
                    subscriptions: Dictionary(uniqueKeysWithValues: ids.map { ($0, ["articles": saved]) })
                ),
                service: .running(url: "http://127.0.0.1:9464", metrics: metrics, ready: false, readiness: "{}")
            )
        }
        let line = { (report: StatusReport) in
            report.lines.first { $0.hasPrefix("subscription  articles") } ?? "\(report.lines)"
        }
        let snapshotJSON = { (report: StatusReport) in report.json["subscriptions"]?[0]?["sinks"]?[0]?["snapshot"] }
        let asked = report(SubscriptionCursorState(startID: 40, snapshotWatermark: 40, resyncRequested: true))
        #expect(line(asked).contains("snapshot running (watermark 40): 0 items read"), "\(line(asked))")
        #expect(line(asked).hasSuffix(", resync requested: taken within seconds"), "\(line(asked))")
        #expect(snapshotJSON(asked)?["resync_requested"] == .bool(true))
        let taken = report(SubscriptionCursorState(startID: 52, snapshotWatermark: 52))
        #expect(line(taken).contains("snapshot running (watermark 52)") && !line(taken).contains("resync"))
        #expect(snapshotJSON(taken)?["watermark"] == .number(JSONNumber(Int64(52))))
        #expect(snapshotJSON(taken)?["resync_requested"] == .bool(false))
    }

    @Test func aBrokerSinksDeadLettersAreShownWhenThereAreAny() throws {
        let config = Self.load(
            sinks: """
                  - type: jetstream
                    servers: ["nats://127.0.0.1:4222"]
                  - type: kafka
                    brokers: ["127.0.0.1:9092"]
                """
        )
        let ids = SinkCatalog.identities(of: config.sinks)
        let report = StatusReport(
            config: config,
            stored: StoredState(deadLetters: [ids[0]: 2]),
            service: .unknown(reason: "http.listen is off")
        )
        let sinkLines = report.lines.filter { $0.hasPrefix("sink ") }
        #expect(sinkLines.count == 2, "\(report.lines)")
        #expect(sinkLines.first?.contains("dead letters 2") == true, "\(sinkLines)")
        #expect(sinkLines.last?.contains("dead letters") == false, "\(sinkLines)")
    }

    /// A snapshot a clean stop cut says where it resumes: after the last key its sink holds, with the lines there
    /// (docs/RELIABILITY.md, "Careless or hostile operators"); one without a resume point starts from its first page.
    @Test func aStoppedSnapshotSaysWhereItResumes() throws {
        let ids = SinkCatalog.identities(of: Self.config.sinks)
        var resumed = SubscriptionCursorState(startID: 40, snapshotWatermark: 40)
        resumed.snapshotAfter = #""b-500""#
        resumed.snapshotLines = 500
        resumed.snapshotCollection = "articles"
        let report = StatusReport(
            config: Self.config,
            stored: StoredState(
                subscriptions: [
                    ids[0]: ["articles": resumed],
                    ids[1]: ["articles": SubscriptionCursorState(startID: 40, snapshotWatermark: 40)],
                ]
            ),
            service: .unknown(reason: "http.listen is off")
        )
        let line = report.lines.first { $0.hasPrefix("subscription  articles") } ?? "\(report.lines)"
        #expect(
            line.contains(
                "sink \(ids[0]): starts after activity id 40, snapshot pending (watermark 40): runs at the next start, "
                    + "resuming after key \"b-500\" "
                    + "(500 lines in the sink)"),
            "\(line)")
        #expect(
            line.hasSuffix("sink \(ids[1]): starts after activity id 40, snapshot pending (watermark 40): runs at the next start"),
            "\(line)")
        let sinks = report.json["subscriptions"]?[0]?["sinks"]
        #expect(sinks?[0]?["snapshot"]?["resume_after"] == .string("b-500"))
        #expect(sinks?[0]?["snapshot"]?["lines_in_sink"] == .number(JSONNumber(Int64(500))))
        #expect(sinks?[1]?["snapshot"]?["resume_after"] == .null)
        #expect(sinks?[1]?["snapshot"]?["state"] == .string("pending"))
    }

    /// A resume point the next start will not use (damaged: `SnapshotResumePoint`) is not shown as one: the line and
    /// `status --json` say what the start will do, from the first page. Before: `status` printed the saved text as the
    /// key, 10 MB of it for a key of 10 MB, with a negative or any other line count.
    @Test func aDamagedResumePointIsShownAsAStartFromTheFirstPage() throws {
        let ids = SinkCatalog.identities(of: Self.config.sinks)
        for (after, lines) in [("\"" + String(repeating: "k", count: 10 << 20) + "\"", Int64(4)), ("{4", 4), ("4", -1)] {
            var damaged = SubscriptionCursorState(startID: 40, snapshotWatermark: 40)
            damaged.snapshotAfter = after
            damaged.snapshotLines = lines
            damaged.snapshotCollection = "articles"
            let report = StatusReport(
                config: Self.config, stored: StoredState(subscriptions: [ids[0]: ["articles": damaged]]),
                service: .unknown(reason: "http.listen is off"))
            let line = report.lines.first { $0.hasPrefix("subscription  articles") } ?? "\(report.lines)"
            #expect(line.contains("snapshot pending (watermark 40): runs at the next start") && !line.contains("resuming"))
            #expect(line.utf8.count < 1000)
            let snapshot = report.json["subscriptions"]?[0]?["sinks"]?[0]?["snapshot"]
            #expect(snapshot?["resume_after"] == .null && snapshot?["lines_in_sink"] == .number(JSONNumber(Int64(0))))
        }
    }

    /// A resume point recorded for another collection (the subscription's `uid` moved to it since) or without its
    /// collection (an older bridge's), which the next start does not use, is shown as a start from the first page.
    /// Before: "resuming after key 4" for a key of `comments` where the subscription now reads `articles`.
    @Test func aResumePointOfAnotherCollectionIsShownAsAStartFromTheFirstPage() throws {
        let ids = SinkCatalog.identities(of: Self.config.sinks)
        for recorded in ["comments", nil] {
            var moved = SubscriptionCursorState(startID: 40, snapshotWatermark: 40)
            moved.snapshotAfter = "4"
            moved.snapshotLines = 4
            moved.snapshotCollection = recorded
            let report = StatusReport(
                config: Self.config, stored: StoredState(subscriptions: [ids[0]: ["articles": moved]]),
                service: .unknown(reason: "http.listen is off"))
            let line = report.lines.first { $0.hasPrefix("subscription  articles") } ?? "\(report.lines)"
            #expect(
                line.contains("snapshot pending (watermark 40): runs at the next start") && !line.contains("resuming"),
                "\(String(describing: recorded)): \(line)")
            let snapshot = report.json["subscriptions"]?[0]?["sinks"]?[0]?["snapshot"]
            #expect(snapshot?["resume_after"] == .null && snapshot?["lines_in_sink"] == .number(JSONNumber(Int64(0))))
        }
    }

    /// A state made for another collection than the uid reads now is begun afresh at the next start: `status` says
    /// the subscription has not started, not that the new collection's snapshot is done (a `resync` waiting across
    /// the move still shows).
    @Test func aStateOfAnotherCollectionIsShownAsNotStarted() throws {
        let ids = SinkCatalog.identities(of: Self.config.sinks)
        let moved = SubscriptionCursorState(
            startID: 40, snapshotWatermark: 40, snapshotDone: true, collection: "comments")
        let report = StatusReport(
            config: Self.config, stored: StoredState(subscriptions: [ids[0]: ["articles": moved]]),
            service: .unknown(reason: "http.listen is off"))
        let line = report.lines.first { $0.hasPrefix("subscription  articles") } ?? "\(report.lines)"
        #expect(line.contains("not started yet") && !line.contains("snapshot done"), "\(line)")
        var same = moved
        same.collection = "articles"
        let kept = StatusReport(
            config: Self.config, stored: StoredState(subscriptions: [ids[0]: ["articles": same]]),
            service: .unknown(reason: "http.listen is off"))
        #expect(kept.lines.contains { $0.hasPrefix("subscription  articles") && $0.contains("snapshot done") })
        var asked = moved
        asked.resyncRequested = true
        let resync = StatusReport(
            config: Self.config, stored: StoredState(subscriptions: [ids[0]: ["articles": asked]]),
            service: .unknown(reason: "http.listen is off"))
        #expect(resync.lines.contains { $0.hasPrefix("subscription  articles") && $0.contains("resync requested") })
    }
}
