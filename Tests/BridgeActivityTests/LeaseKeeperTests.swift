import BridgeEvents
import BridgeNATS
import BridgeSystem
import BridgeTestSupport
import Testing

@testable import BridgeActivity

/// The lease keeper against a real nats-server: it takes a free lease, renews it, steps down at once when another
/// writer took the key (a lost compare-and-set), waits a whole lease before taking it back, and releases it at stop.
@Suite(.timeLimit(.minutes(3))) struct LeaseKeeperTests {
    /// A started server named `name`, a connection to it and its bucket `name`.
    static func bucket(_ name: String) async throws -> (NATSServer, NATSConnection, KeyValueStore) {
        let server = try NATSServer(name: name, in: try TestEnvironment.makeTemporaryDirectory(prefix: name))
        try await server.start()
        let connection = try await NATSConnection.connect(settings: NATSSettings(servers: [server.url]), logger: .silent)
        let store = try await KeyValueStore.open(connection: connection, settings: KeyValueSettings(bucket: name))
        return (server, connection, store)
    }

    @Test func aRewrittenLeaseStepsTheKeeperDownUntilAWholeLeasePassed() async throws {
        let (server, connection, store) = try await Self.bucket("lease_test")
        defer { withExtendedLifetime(server) {} }  // the server runs until the test ends
        let keys = SharedStateKeys(name: "t")
        let health = HealthState(expectedSubscriptions: [])
        let registry = MetricsRegistry()
        let keeper = LeaseKeeper(
            store: store, keys: keys, lease: .seconds(6), registry: registry, health: health, logger: .silent)
        #expect(health.snapshot.reasons.first == "standby")
        let stop = ShutdownSignal()
        async let running: Void = keeper.run(stop: stop)

        #expect(await pollUntil(timeout: .seconds(20)) { keeper.mayDeliver() }, "a free lease is taken at once")
        #expect(await pollUntil(timeout: .seconds(20)) { !health.snapshot.standby })
        #expect(registry.render().contains("directus_bridge_role{role=\"active\"} 1"))
        // Renewed every 2 s: the revision moves while the keeper holds it.
        let first = try #require(try await BlockingExecutor.shared.perform { try store.entry(keys.lease) })
        #expect(await pollUntil(timeout: .seconds(20)) {
            ((try? await BlockingExecutor.shared.perform { try store.entry(keys.lease) })??.revision ?? 0) > first.revision
        })

        // Another bridge writes the key: the keeper's next renewal loses its compare-and-set and it steps down.
        // The lease the keeper then waits out starts when it reads that revision, after this write: the time
        // before the write is a reference the keeper cannot beat, however late this task runs.
        let beforeTheWrite = ContinuousClock.now
        let taken = try await BlockingExecutor.shared.perform { () throws -> UInt64 in
            let current = try store.entry(keys.lease)
            return try store.update(keys.lease, value: Array("{\"holder\":\"other\"}".utf8), expecting: current!.revision)
        }
        // The permit closes first (it is a clock comparison); readiness follows when the keeper announces it.
        #expect(await pollUntil(timeout: .seconds(20)) { !keeper.mayDeliver() })
        #expect(await pollUntil(timeout: .seconds(20)) { health.snapshot.reasons.first == "standby" })
        #expect(registry.render().contains("directus_bridge_role{role=\"standby\"} 1"))

        // The other writer never renews: the keeper takes the lease back, but not before a whole lease has passed
        // since it saw the other's revision. Measured from before the write, so a late poll cannot make it fail (the
        // time the step-down was noticed, as before, could be seconds late on a loaded machine).
        #expect(await pollUntil(timeout: .seconds(30)) { keeper.mayDeliver() })
        #expect(ContinuousClock.now - beforeTheWrite >= .seconds(6))
        let retaken = try #require(try await BlockingExecutor.shared.perform { try store.entry(keys.lease) })
        #expect(retaken.revision > taken)

        // A cursor write that lost its compare-and-set (the backend calls `fenced`) steps it down at once.
        keeper.fenced("test")
        #expect(!keeper.mayDeliver())
        #expect(await pollUntil(timeout: .seconds(30)) { keeper.mayDeliver() })

        stop.trigger()
        await running
        // Released at stop: a delete marker, so a standby takes over at once.
        let released = try await BlockingExecutor.shared.perform { try store.entry(keys.lease) }
        #expect(released != nil && released?.value == nil)
        await connection.close()
    }

    @Test func theRoleWaitsEndWhenTheRoleChangesOrTheLeaseRunsOut() async throws {
        let (server, connection, store) = try await Self.bucket("lease_wait")
        let keeper = LeaseKeeper(
            store: store, keys: SharedStateKeys(name: "w"), lease: .seconds(3), registry: MetricsRegistry(),
            health: HealthState(expectedSubscriptions: []), logger: .silent)
        let stop = ShutdownSignal()
        let keeperStop = ShutdownSignal()
        let patience = Duration.seconds(Int64(60 * TestEnvironment.patience))
        // Not running yet: nothing acquires, so the wait for the role goes on (no timer ends it).
        #expect(await withTimeLimit(.milliseconds(300)) { await keeper.waitUntilActive(stop: stop) } == nil)
        async let running: Void = keeper.run(stop: keeperStop)
        // True only once `mayDeliver` was (not asserted again here: on a loaded machine a 3 s lease may lapse meanwhile).
        #expect(await withTimeLimit(patience) { await keeper.waitUntilActive(stop: stop) } == true)

        // A step-down (a fenced cursor write) ends the wait for it.
        let active = keeper.roleGeneration
        async let fencedWait: Void = keeper.waitUntilStandby(since: active, stop: stop)
        keeper.fenced("test")
        await fencedWait

        // Active again; then the server stops answering: no renewal succeeds, and the wait ends by the lease's deadline
        // (two thirds of 3 s after the last renewal) even before the keeper announces the step-down.
        #expect(await withTimeLimit(patience) { await keeper.waitUntilActive(stop: stop) } == true)
        let generation = keeper.roleGeneration
        try await server.pause()
        let lapsed = await withTimeLimit(patience) { await keeper.waitUntilStandby(since: generation, stop: stop) }
        #expect(lapsed != nil)
        #expect(!keeper.mayDeliver())
        server.resume()  // so that the release at stop is answered rather than timed out
        keeperStop.trigger()
        await running
        await connection.close()
    }
}
