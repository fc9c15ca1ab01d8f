import BridgeTestSupport
import Foundation
import Testing

/// Several bridges on one name with `state.backend: jetstream` (README "Running several replicas"): the real binary
/// against the Directus emulator and real nats-server processes. Each bridge writes NDJSON to a file of its own
/// directory, so what each one delivered is known.
@Suite(.serialized, .timeLimit(.minutes(10))) struct SharedStateTests: SharedStateRig {
    @Test func twoBridgesOnOneNameOnlyOneDelivers() throws {
        let server = try startedSingleServer("shared-two")
        let emulator = try Emulator()
        defer { emulator.stop() }
        let (active, standby) = try startPair(emulator, [server])
        let expected = try changes(emulator, count: 30)
        #expect(active.waitUntil(timeout: 20) { Set(delivered($0)).isSuperset(of: expected) }, "\(active.stderr.suffix(3000))")
        #expect(delivered(standby).isEmpty)
        #expect(!standby.stderr.contains("became active"))
        let ready = readiness(standby)
        #expect(ready?.status == 503 && ready?.reasons.first == "standby", "\(String(describing: ready))")
        #expect(readiness(active)?.status == 200)
        #expect(metric(active, "directus_bridge_role", ["role": "active"]) == 1)
        #expect(metric(standby, "directus_bridge_role", ["role": "standby"]) == 1)
        #expect(metric(standby, "directus_bridge_role", ["role": "active"]) == 0)
        #expect((metric(active, "directus_bridge_lease_age_seconds") ?? 99) < 5)

        // A graceful stop releases the lease: the standby takes over at once and goes on from the shared cursor.
        active.send(SIGTERM)
        #expect(active.waitForExit() == 0, "\(active.stderr.suffix(2000))")
        #expect(standby.waitForLog("became active", timeout: 10), "\(standby.stderr.suffix(3000))")
        let later = try changes(emulator, count: 10)
        #expect(standby.waitUntil(timeout: 20) { Set(delivered($0)).isSuperset(of: later) }, "\(standby.stderr.suffix(3000))")
        #expect(Set(delivered(standby)).isDisjoint(with: expected), "the standby resumed from the shared cursor")
        standby.send(SIGTERM)
        #expect(standby.waitForExit() == 0)
    }

    /// The failover time: from the active bridge's SIGKILL to the standby's first delivery, during a steady stream
    /// of changes, with the state on a three-node cluster. Every change arrives; a change both delivered (written by
    /// the first and killed before its cursor moved past it) is the same change in both: every field but the
    /// receiving bridge's own, `origin` (the standby recovers it from the activity log: `backfill`), `received_at`,
    /// and `data`, which is the item as the bridge that reads it finds it (docs/contract: "state now").
    @Test func aKilledActiveBridgeIsReplacedWithinTheLeaseAndNothingIsLost() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "shared-kill")
        let servers = try NATSServer.cluster(in: directory)
        let emulator = try Emulator()
        defer { emulator.stop() }
        let (active, standby) = try startPair(emulator, servers)
        let before = try emulator.newestActivityID()
        try emulator.control("generator", ["collection": "articles", "count": 400, "interval_ms": 20, "kind": "mixed"])
        #expect(active.waitUntil(timeout: 20) { delivered($0).count >= 20 }, "\(active.stderr.suffix(3000))")
        active.send(SIGKILL)
        let killed = ContinuousClock.now
        #expect(active.waitForExit() != nil)
        let deliveredByFirst = lines(active)
        let tookOver = standby.waitUntil(timeout: 30) { !delivered($0).isEmpty }
        let failover = ContinuousClock.now - killed
        print("shared state failover at lease 5s: first delivery by the standby \(failover) after SIGKILL")
        #expect(tookOver, "\(standby.stderr.suffix(3000))")
        // The lease, then a margin stretched by the patience factor (6 s at its default of 3).
        #expect(failover < .seconds(5 + TestEnvironment.patient(2)), "within the lease and a margin")
        try emulator.waitForGenerators(timeout: 60)
        let expected = try emulator.activityIDs(["articles"], after: before).map { "act_\($0)" }
        #expect(expected.count == 400)
        let remaining = Set(expected).subtracting(deliveredByFirst.map(\.id))
        #expect(
            standby.waitUntil(timeout: 30) { Set(delivered($0)).isSuperset(of: remaining) },
            "\(standby.stderr.suffix(3000))")
        let deliveredBySecond = lines(standby)
        #expect(Set(deliveredBySecond.map(\.id)).isSubset(of: expected), "nothing but the changes made")
        // At-least-once: what both delivered is the same change (the same line but for the receiver's own fields).
        let firstLines = Dictionary(deliveredByFirst.map { ($0.id, $0.line) }) { first, _ in first }
        let repeated = deliveredBySecond.filter { firstLines[$0.id] != nil }
        for line in repeated {
            let first = try #require(firstLines[line.id])
            #expect(changeFields(first) == changeFields(line.line), "\(line.id): first \(first)\nagain \(line.line)")
        }
        print("shared state failover: \(deliveredByFirst.count) lines before the kill, \(repeated.count) repeated")
        standby.send(SIGTERM)
        #expect(standby.waitForExit() == 0)
    }

    /// A frozen active bridge (SIGSTOP past its lease) must not deliver once it runs again: the standby took over,
    /// and the thawed bridge's lease ran out on its own clock.
    @Test func aFrozenActiveBridgeDeliversNothingAfterTheStandbyTookOver() throws {
        let server = try startedSingleServer("shared-stop")
        let emulator = try Emulator()
        defer { emulator.stop() }
        let (frozen, standby) = try startPair(emulator, [server], lease: "3s")
        // Frozen in the middle of a stream of changes, with events read and not yet written.
        let before = try emulator.newestActivityID()
        try emulator.control("generator", ["collection": "articles", "count": 300, "interval_ms": 10, "kind": "mixed"])
        #expect(frozen.waitUntil(timeout: 20) { delivered($0).count >= 10 })
        frozen.send(SIGSTOP)
        // kill(2) returns before every thread has stopped: count only once none can write any more.
        #expect(frozen.waitUntil(timeout: 10) { isStopped($0.pid) })
        let frozenCount = delivered(frozen).count
        #expect(standby.waitForLog("became active", timeout: 30), "\(standby.stderr.suffix(3000))")
        try emulator.waitForGenerators(timeout: 60)
        let expected = try emulator.activityIDs(["articles"], after: before).map { "act_\($0)" }
        let remaining = Set(expected).subtracting(delivered(frozen))
        #expect(standby.waitUntil(timeout: 30) { Set(delivered($0)).isSuperset(of: remaining) })
        frozen.send(SIGCONT)
        #expect(frozen.waitForLog("became standby", timeout: 20), "\(frozen.stderr.suffix(3000))")
        let second = try changes(emulator, count: 20)
        #expect(standby.waitUntil(timeout: 20) { Set(delivered($0)).isSuperset(of: second) })
        #expect(delivered(frozen).count == frozenCount, "the thawed bridge delivered after the takeover")
        #expect(frozen.waitUntil(timeout: 10) { readiness($0)?.reasons.first == "standby" })
        for bridge in [frozen, standby] {
            bridge.send(SIGTERM)
            #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
        }
    }

    /// The bucket unreachable: the active bridge steps down before its lease could lapse, says so, and resumes from
    /// its cursor when the server is back; changes made meanwhile arrive.
    @Test func theActiveBridgeStepsDownWhileTheBucketIsUnreachableAndResumes() throws {
        let server = try startedSingleServer("shared-outage")
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(config: config(emulator, [server], lease: "3s"))
        try #require(bridge.waitForLog("became active", timeout: 30), "\(bridge.stderr.suffix(3000))")
        #expect(bridge.waitUntilConnected(timeout: 30))
        server.kill()
        #expect(bridge.waitForLog("became standby", timeout: 20), "\(bridge.stderr.suffix(3000))")
        #expect(bridge.waitUntil(timeout: 10) { readiness($0)?.reasons.first == "standby" })
        let expected = try changes(emulator, count: 20)
        #expect(Set(delivered(bridge)).isDisjoint(with: expected), "a standby delivers nothing")
        try server.start()
        #expect(
            bridge.waitUntil(timeout: 30) { $0.stderr.components(separatedBy: "became active").count - 1 >= 2 },
            "\(bridge.stderr.suffix(3000))")
        #expect(bridge.waitUntil(timeout: 30) { Set(delivered($0)).isSuperset(of: expected) }, "\(bridge.stderr.suffix(3000))")
        #expect(bridge.waitUntil(timeout: 10) { readiness($0)?.status == 200 })
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }

    /// A node of the three-node cluster killed while changes stream: the replicated state survives and every change
    /// arrives (from whichever bridge holds the lease).
    @Test func aKilledNATSNodeLosesNoState() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "shared-node")
        let servers = try NATSServer.cluster(in: directory)
        let emulator = try Emulator()
        defer { emulator.stop() }
        let (first, second) = try startPair(emulator, servers)
        let before = try emulator.newestActivityID()
        try emulator.control("generator", ["collection": "articles", "count": 150, "interval_ms": 20, "kind": "mixed"])
        #expect(first.waitUntil(timeout: 20) { delivered($0).count >= 10 })
        servers[0].kill()
        try emulator.waitForGenerators(timeout: 60)
        let expected = Set(try emulator.activityIDs(["articles"], after: before).map { "act_\($0)" })
        #expect(
            first.waitUntil(timeout: 40) { Set(delivered($0) + delivered(second)).isSuperset(of: expected) },
            "\(first.stderr.suffix(2000))\n\(second.stderr.suffix(2000))")
        #expect(Set(delivered(first) + delivered(second)).isSubset(of: expected))
        for bridge in [first, second] {
            bridge.send(SIGTERM)
            #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
        }
    }

    /// A webhook sink on shared state: events the active bridge holds in its local outbox are not behind the shared
    /// cursor, so when it dies while the receiver refuses them, the standby sends every one of them.
    @Test func eventsInTheDeadBridgesOutboxFileAreSentByTheStandby() throws {
        let server = try startedSingleServer("shared-webhook")
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try receiver.script(defaultStep: ["status": 503])
        let (active, standby) = try startPair(config: sharedWebhookConfig(emulator, [server], receiver, maxAttempts: 1000))
        let expected = Set(try changes(emulator, count: 10))
        // The active bridge holds events in its outbox, refused so far.
        #expect(active.waitUntil(timeout: 20) { _ in !((try? receiver.requests()) ?? []).isEmpty })
        #expect(!((try? receiver.requests()) ?? []).contains(where: \.delivered))
        active.send(SIGKILL)
        #expect(active.waitForExit() != nil)
        try receiver.script(defaultStep: ["status": 204])
        #expect(standby.waitForLog("became active", timeout: 30), "\(standby.stderr.suffix(3000))")
        #expect(
            standby.waitUntil(timeout: 30) { _ in Set((try? receiver.delivered().map(\.id)) ?? []) == expected },
            "\(standby.stderr.suffix(3000))")
        standby.send(SIGTERM)
        #expect(standby.waitForExit() == 0, "\(standby.stderr.suffix(2000))")
    }

    /// `check` with shared state: the bucket answers and the lease holder is named; with the servers down, FAIL.
    @Test func checkNamesTheLeaseHolderAndFailsWithoutTheServers() throws {
        let server = try startedSingleServer("shared-check")
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(config: config(emulator, [server]))
        try #require(bridge.waitForLog("became active", timeout: 30), "\(bridge.stderr.suffix(3000))")
        func check() throws -> (Int32?, [String]) {
            let process = try BridgeProcess(arguments: ["check", "--config", "bridge.yaml"], directory: bridge.directory)
            return (process.waitForExit(timeout: 30), process.lines)
        }
        let (passed, lines) = try check()
        let line = lines.first { $0.contains("shared state bridge_test/orders") } ?? ""
        #expect(passed == 0, "\(lines)")
        #expect(line.hasPrefix("ok") && line.contains("lease held by"), "\(lines)")
        server.kill()
        let (failed, downLines) = try check()
        #expect(failed != 0)
        #expect(downLines.contains { $0.contains("shared state bridge_test/orders") && $0.contains("cannot connect") })
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }
}
