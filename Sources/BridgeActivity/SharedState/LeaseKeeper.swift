package import BridgeEvents
internal import BridgeJSON
package import BridgeNATS
package import BridgeSystem
internal import Synchronization

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Keeps (or waits for) the lease of one bridge name in the shared bucket: drives `LeaseStateMachine` with reads and
/// compare-and-set writes of `<name>.lease` on the blocking executor, announces role changes (logs at info level,
/// `directus_bridge_role`, `directus_bridge_lease_age_seconds`, `/readyz`'s `standby`), and is the delivery permit
/// every sink runner asks before it delivers.
package final class LeaseKeeper: DeliveryPermit {
    private let store: KeyValueStore
    private let key: String
    /// This bridge's holder id: host name, process id and a random part.
    package let holder: String
    private let machine: Mutex<LeaseStateMachine>
    private let health: HealthState
    private let logger: Logger
    /// Bumped at every change of role, so a waiter sees a step-down and a re-acquisition in between.
    private let generation = Atomic<Int>(0)
    /// Rung at every change of role: the runtime waits on it for this bridge to become active, or to stop being so.
    private let roleChanged = Wakeup()
    /// How long a standby waits after a failed read or acquisition: from its poll interval up to a whole lease.
    private let failureDelays: Backoff

    /// A keeper of `keys.lease` in `store` for `lease`, reporting into `registry` and `health`.
    package init(
        store: KeyValueStore,
        keys: SharedStateKeys,
        lease: Duration,
        registry: MetricsRegistry,
        health: HealthState,
        logger: Logger
    ) {
        self.store = store
        self.key = keys.lease
        self.holder = Self.makeHolder()
        let initial = LeaseStateMachine(lease: lease)
        self.machine = Mutex(initial)
        self.failureDelays = Backoff(initialDelay: initial.pollInterval, maxDelay: lease)
        self.health = health
        self.logger = logger
        health.update { $0.standby = true }
        // The keeper lives as long as the process's registry (the gauges hold it).
        for role in ["active", "standby"] {
            registry.gaugeFunction(
                "directus_bridge_role",
                help: "1 for this bridge's role among the bridges sharing its state.",
                labels: [("role", role)]
            ) { [self] in (role == "active") == mayDeliver() ? 1 : 0 }
        }
        registry.gaugeFunction(
            "directus_bridge_lease_age_seconds",
            help: "Seconds since the lease was last renewed (as the active bridge sent it, or a standby saw it change)."
        ) { [self] in machine.withLock { $0.age(now: .now) }.map(\.inSeconds) ?? 0 }
    }

    // MARK: - Role

    /// True while this bridge holds the lease with time to spare (checked before every delivery).
    package func mayDeliver() -> Bool { machine.withLock { $0.mayDeliver(now: .now) } }

    /// Counts role changes (a term of being active lasts while it stays the same).
    package var roleGeneration: Int { generation.load(ordering: .acquiring) }

    /// A cursor write found another writer (`SharedCursorBackend`): step down now.
    package func fenced(_ reason: String) {
        let transition = machine.withLock { $0.receivedLost(reason: reason) }
        announce(transition)
    }

    /// Waits until this bridge holds the lease; false when `stop` (or the task's cancellation) came first. Only an
    /// acquisition makes it active, and each is announced: the wait has no timer.
    package func waitUntilActive(stop: ShutdownSignal) async -> Bool {
        while !stop.isTriggered && !Task.isCancelled {
            if mayDeliver() { return true }
            await roleChanged.wait(until: stop)
        }
        return false
    }

    /// Waits until this bridge is no longer active in the term that began at `generation` (or `stop`). A step-down
    /// is announced; a lease that runs out unrenewed stops delivery at its deadline before the keeper's next turn
    /// announces it, so the wait also ends at that deadline (a real timer: the lease's).
    package func waitUntilStandby(since generation: Int, stop: ShutdownSignal) async {
        while !stop.isTriggered && !Task.isCancelled && roleGeneration == generation {
            guard let until = machine.withLock({ $0.deliverableUntil }) else { return }
            let left = until - ContinuousClock.now
            guard left > .zero else { return }
            await roleChanged.wait(timeout: left, until: stop)
        }
    }

    // MARK: - Driving

    /// Keeps the lease until `stop`, then releases it (deletes the key, expecting its revision) so that a standby
    /// takes over at once.
    package func run(stop: ShutdownSignal) async {
        var failures = failureDelays
        while !stop.isTriggered {
            let now = ContinuousClock.now
            let (action, transition) = machine.withLock { $0.nextAction(now: now) }
            announce(transition)
            switch action {
            case .read:
                await read(failures: &failures, stop: stop)
            case .acquire(let revision):
                await acquire(expecting: revision, failures: &failures, stop: stop)
            case .renew(let revision, let deadline):
                await renew(expecting: revision, deadline: deadline)
            case .wait(let until):
                // The machine's own schedule (the next renewal, a standby's next read): a real timer. A standby's
                // read finds a lease whose holder died, which tells no one; only time shows it expired.
                await stop.sleep(for: max(.milliseconds(1), until - ContinuousClock.now))
            }
        }
        let held = machine.withLock { $0.stopping() }
        if let held {
            let (store, key) = (store, key)
            _ = try? await BlockingExecutor.shared.perform { try store.delete(key, expecting: held) }
            announce(.becameStandby(reason: "stopping"))
        }
    }

    /// Reads the lease key. A failure (the bucket unreachable) leaves the machine as it was — a later acquisition
    /// is a compare-and-set on the revision it saw, so it can only succeed if the holder has not renewed since — and
    /// waits the backoff's next delay.
    private func read(failures: inout Backoff, stop: ShutdownSignal) async {
        let (store, key) = (store, key)
        do {
            let entry = try await BlockingExecutor.shared.perform { try store.entry(key) }
            let now = ContinuousClock.now
            machine.withLock { $0.receivedLease(revision: entry?.revision, free: entry?.value == nil, now: now) }
            failures.reset()
        } catch {
            let delay = failures.nextDelay()
            logger.debug("reading the lease failed", metadata: [LogKey.error: "\(error)", LogKey.delay: delay])
            await stop.sleep(for: delay)  // the backoff's delay: a real timer
        }
    }

    private func acquire(expecting revision: UInt64, failures: inout Backoff, stop: ShutdownSignal) async {
        let (store, key, value) = (store, key, holderValue())
        let sentAt = ContinuousClock.now
        do {
            let written = try await BlockingExecutor.shared.perform {
                try store.update(key, value: value, expecting: revision)
            }
            announce(machine.withLock { $0.receivedAcquired(revision: written, sentAt: sentAt) })
            failures.reset()
        } catch {
            // Lost to another standby, or the bucket is unreachable: read again, after the backoff's next delay,
            // before any other attempt.
            let delay = failures.nextDelay()
            logger.debug("acquiring the lease failed", metadata: [LogKey.error: "\(error)", LogKey.delay: delay])
            _ = machine.withLock { $0.receivedLost(reason: "acquisition failed") }
            await stop.sleep(for: delay)  // the backoff's delay: a real timer
        }
    }

    private func renew(expecting revision: UInt64, deadline: ContinuousClock.Instant) async {
        let (store, key, value) = (store, key, holderValue())
        let sentAt = ContinuousClock.now
        // The request gives up before the lease runs out, so a hung server cannot keep this bridge delivering.
        let timeout = max(.milliseconds(50), deadline - sentAt)
        do {
            let written = try await BlockingExecutor.shared.perform {
                try store.update(key, value: value, expecting: revision, timeout: timeout)
            }
            machine.withLock { $0.receivedRenewed(revision: written, sentAt: sentAt) }
        } catch let error as NATSError where error.kind == .conflict {
            announce(machine.withLock { $0.receivedLost(reason: "another bridge took the lease") })
        } catch {
            logger.debug("renewing the lease failed", metadata: [LogKey.error: "\(error)"])
            machine.withLock { $0.receivedFailure(now: .now) }
        }
    }

    private func announce(_ transition: LeaseStateMachine.Transition?) {
        guard let transition else { return }
        generation.add(1, ordering: .releasing)
        defer { roleChanged.ring() }
        switch transition {
        case .becameActive:
            health.update { $0.standby = false }
            logger.info("became active", metadata: ["lease.holder": holder, LogKey.reason: "acquired the lease"])
        case .becameStandby(let reason):
            health.update { $0.standby = true }
            logger.info("became standby", metadata: ["lease.holder": holder, LogKey.reason: reason])
        }
    }

    private func holderValue() -> [UInt8] {
        let object: JSONValue = ["holder": .string(holder), "renewed": .string(Timestamp.now().rfc3339)]
        return object.serialized()
    }

    private static func makeHolder() -> String {
        var name = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&name, name.count - 1) == 0
            ? name.withUnsafeBufferPointer { PeerText.string($0.baseAddress, maximumLength: 64) } : "host"
        return "\(host):\(getpid()):\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
    }
}
