internal import BridgeSystem
internal import CNats

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Publishes to JetStream asynchronously over one `NATSConnection`, owning its reply subscription, a driver
/// thread and a `jsCtx` (for the stream probe only).
///
/// `submit` hands over a batch; its completion gets one outcome per message, in order, when the last one is
/// known. A message counts as stored only on its publish acknowledgement. Retriable failures (no acknowledgement
/// within `ackTimeout`, no responder while a stream leader is elected, a lost connection) are published again
/// with backoff, with the same `Nats-Msg-Id`, until acknowledged or the publisher is closed; messages of one
/// ordering key are stored in submission order. At most `maxOutstanding` messages are held; `submit` waits
/// beyond. Confined to one task (not Sendable); completions run on libnats's, the driver's or the submitter's
/// thread. How a publish and its acknowledgement travel: `JetStreamPublisherCore`.
package final class JetStreamPublisher {
    private let connection: NATSConnection
    private let handle: JetStreamHandle
    private let replies: ReplySubscription
    private let core: JetStreamPublisherCore
    private var driver: DetachedThread.Joinable?

    private init(
        connection: NATSConnection,
        handle: JetStreamHandle,
        replies: ReplySubscription,
        core: JetStreamPublisherCore
    ) {
        self.connection = connection
        self.handle = handle
        self.replies = replies
        self.core = core
    }

    /// Dropped without `close`: shuts down on `BlockingExecutor.shared`, because the driver's join waits out its
    /// current publish round and the held messages' completions would run on the dropping thread, often a
    /// cooperative one. The job holds the connection until the subscription and the context are released.
    deinit {
        guard let driver else { return }
        let (core, replies, handle, connection) = (core, replies, handle, connection)
        BlockingExecutor.shared.submit {
            Self.shutDown(driver: driver, core: core, replies: replies, handle: handle)
            withExtendedLifetime(connection) {}
        }
    }

    /// A publisher on `connection`.
    package static func make(
        connection: NATSConnection,
        settings: JetStreamPublisherSettings = JetStreamPublisherSettings()
    ) throws(NATSError) -> JetStreamPublisher {
        guard settings.maxOutstanding >= 1 && settings.maxOutstanding <= 1_000_000 else {
            throw NATSError(kind: .configuration, message: "max outstanding publishes must be 1...1000000")
        }
        let core = JetStreamPublisherCore(
            settings: settings,
            connection: connection.handle,
            replyPrefix: try ReplySubscription.uniquePrefix()
        )
        // Kept alive by the connection until it is destroyed: libnats may be inside the reply callback (which
        // reaches the core unretained) while this publisher is torn down.
        connection.context.keepAlive(core)
        let replies = try ReplySubscription.subscribe(connection: connection.handle, core: core, settings: settings)
        var raw: OpaquePointer?
        let status = natsConnection_JetStream(&raw, connection.handle.pointer, nil)
        guard status == NATS_OK, let raw else {
            replies.close()
            throw NATSError.from(status: status, context: "JetStream context")
        }
        let handle = JetStreamHandle(pointer: raw)
        connection.context.addListener { [core] state in core.connectionChanged(to: state) }
        core.connectionChanged(to: connection.status.state)
        let publisher = JetStreamPublisher(connection: connection, handle: handle, replies: replies, core: core)
        try publisher.startDriver()
        return publisher
    }

    private func startDriver() throws(NATSError) {
        do {
            // The thread holds the core until the driver loop returns.
            driver = try DetachedThread.startJoinable { [core] in core.runDriver() }
        } catch {
            throw NATSError(
                kind: error.isRetriable ? .retriable : .fatal,
                message: "could not start the JetStream publish thread: \(error)"
            )
        }
    }

    // MARK: - Publishing

    /// Submits `messages` in order; `completion` gets one outcome per message, in the same order, once the last
    /// one is known (keep it short: it runs on libnats's delivery thread, the driver's thread or the caller's).
    ///
    /// Returns once every message is held by the publisher, waiting while `maxOutstanding` are. If the task is
    /// cancelled while waiting it throws `CancellationError`; messages not handed over are reported failed
    /// (retriable, "not sent") and the completion still runs exactly once.
    ///
    /// `publishingHere`: the caller runs on a thread of its own that may block (a sink's runner, never the
    /// cooperative pool), and what is ready to go is published on it before this returns, sparing the driver
    /// thread the hand-over and its wake-up (BENCHMARKS.md, "Issue 26, item 6: JetStream, our CPU per event above
    /// libnats's"); otherwise the driver thread publishes.
    package func submit(
        _ messages: [JetStreamMessage],
        publishingHere: Bool = false,
        completion: @escaping @Sendable ([JetStreamOutcome]) -> Void
    ) async throws {
        var next = 0
        var rejected: [(index: Int, error: NATSError)] = []
        let (batch, empty) = core.lock.withLock {
            $0.scheduler.openBatch(count: messages.count, completion: completion)
        }
        empty.map { $0.completion($0.outcomes) }
        defer {
            var completions: [JetStreamPublishScheduler.Completion] = []
            let notSent = NATSError(kind: .retriable, message: "not sent: the publisher was stopped")
            core.lock.withLock { state in
                for (index, error) in rejected {
                    state.scheduler.finishUnsent(batch: batch, index: index, error: error).map {
                        completions.append($0)
                    }
                }
                for index in next..<messages.count {
                    state.scheduler.finishUnsent(batch: batch, index: index, error: notSent).map {
                        completions.append($0)
                    }
                }
            }
            for completion in completions { completion.completion(completion.outcomes) }
        }
        // A sink's messages go to the few subjects its template names: each is checked once per batch.
        var lastValid: String?
        while next < messages.count {
            try Task.checkCancellation()
            let (added, work, wakeDriver) = core.lock.withLock {
                state -> (Int, JetStreamPublisherCore.Work, Bool) in
                guard !state.stopping else { return (0, [], false) }
                let count = min(state.scheduler.room, messages.count - next)
                for index in next..<(next + count) {
                    let subject = messages[index].subject
                    do throws(NATSError) {
                        if subject != lastValid {
                            try NATSSubject.validate(subject)
                            lastValid = subject
                        }
                        state.scheduler.add(messages[index], batch: batch, index: index)
                    } catch {
                        rejected.append((index, error))
                    }
                }
                guard publishingHere else { return (count, [], true) }
                let (work, wakeDriver) = JetStreamPublisherCore.takeWorkHere(&state, now: .now)
                return (count, work, wakeDriver)
            }
            if added > 0 {
                next += added
                if !work.isEmpty { core.publish(work) }
                if wakeDriver { core.lock.signal() }
            } else {
                await core.waitForCapacity()
                if core.lock.withLock({ $0.stopping }) { return }
            }
        }
    }

    /// Publishes `messages` and waits for every outcome (`submit` plus waiting for its completion).
    package func send(_ messages: [JetStreamMessage]) async throws -> [JetStreamOutcome] {
        await Self.first(of: try await submitted(messages)) ?? []
    }

    /// `send`, waiting at most `limit` for the outcomes: nil when they did not come by then (a probe's test event).
    package func send(_ messages: [JetStreamMessage], within limit: Duration) async throws -> [JetStreamOutcome]? {
        let outcomes = try await submitted(messages)
        return await withTimeLimit(limit) { await Self.first(of: outcomes) }
    }

    /// Submits `messages`; their outcomes arrive on the stream.
    private func submitted(_ messages: [JetStreamMessage]) async throws -> AsyncStream<[JetStreamOutcome]> {
        let (stream, continuation) = AsyncStream<[JetStreamOutcome]>.makeStream(bufferingPolicy: .unbounded)
        try await submit(messages) { outcomes in
            continuation.yield(outcomes)
            continuation.finish()
        }
        return stream
    }

    private static func first(of outcomes: AsyncStream<[JetStreamOutcome]>) async -> [JetStreamOutcome]? {
        for await batch in outcomes { return batch }
        return nil
    }

    /// Messages held (submitted, not yet finished) and published awaiting an acknowledgement.
    package var outstanding: (held: Int, inFlight: Int) {
        core.lock.withLock { ($0.scheduler.heldCount, $0.scheduler.inFlightCount) }
    }

    /// What the publisher did about its acknowledgement deadlines so far (for diagnosis).
    package var activity: JetStreamPublisherActivity { core.lock.withLock { $0.activity } }

    /// The last error the server answered a publish with, until one is acknowledged (`JetStreamPublishScheduler`).
    package var lastRefusal: NATSError? { core.lock.withLock { $0.scheduler.lastRefusal } }

    /// The connection's health.
    package var connectionStatus: NATSConnectionStatus { connection.status }

    // MARK: - Probe

    /// The names of the streams whose subjects overlap `subject` (wildcards allowed), asking the server with
    /// `timeout`; empty when none does. Proves the server is reachable, the credentials work and JetStream is on.
    package func streamNames(matching subject: String, timeout: Duration) async throws -> [String] {
        try NATSSubject.validate(subject, wildcards: true)
        let handle = self.handle
        return try await BlockingExecutor.shared.perform {
            try JetStreamProbe.streamNames(matching: subject, handle: handle, timeout: timeout)
        }
    }

    /// Of the streams `names`, those that never acknowledge a publish (`no_ack`), asking the server with `timeout`
    /// each.
    package func streamsNotAcknowledging(_ names: [String], timeout: Duration) async throws -> [String] {
        let handle = self.handle
        return try await BlockingExecutor.shared.perform {
            try names.filter { name throws(NATSError) in
                try !JetStreamProbe.settings(ofStream: name, context: handle.pointer, timeout: timeout).acknowledges
            }
        }
    }

    // MARK: - Closing

    /// Waits up to `drainTimeout` for held messages to be acknowledged, then stops: what is left is reported
    /// failed (retriable), the driver thread ends and the JetStream context is released.
    package func close(drainTimeout: Duration) async {
        let core = self.core
        _ = await withTimeLimit(drainTimeout) {
            await core.waitUntilDrained()
            return true
        }
        let publisher = UnsafeShutdown(publisher: self)
        _ = try? await BlockingExecutor.shared.perform { publisher.run() }
    }

    /// Stops the driver, ends the reply subscription, fails every held message, destroys the context.
    /// Idempotent; blocks for at most the driver's current publish round.
    fileprivate func shutDown() {
        guard let driver else { return }
        self.driver = nil
        Self.shutDown(driver: driver, core: core, replies: replies, handle: handle)
    }

    private static func shutDown(
        driver: DetachedThread.Joinable,
        core: JetStreamPublisherCore,
        replies: ReplySubscription,
        handle: JetStreamHandle
    ) {
        let waiter = core.lock.withLock { state in
            state.stopping = true
            defer { state.capacityWaiter = nil }
            return state.capacityWaiter
        }
        core.lock.signal()
        waiter?.resume()
        driver.join()
        let closedError = NATSError(kind: .retriable, message: "not acknowledged before the publisher closed")
        // Closing first: from here on a retriable failure finishes its message instead of retrying it.
        var completions = core.lock.withLock { $0.scheduler.close(error: closedError) }
        // No more answers are read; one being delivered right now finds no token below and is ignored.
        replies.close()
        // Whatever is still in flight fails now (its publish may still be stored: a later publish of the same
        // event is deduplicated by its `Nats-Msg-Id`).
        core.lock.withLock { state in
            for token in state.scheduler.inFlight {
                state.scheduler.publishFailed(token: token, error: closedError, now: .now)
                    .map { completions.append($0) }
            }
        }
        jsCtx_Destroy(handle.pointer)
        for completion in completions { completion.completion(completion.outcomes) }
    }
}

/// Hands `shutDown` to the blocking executor. The publisher is not used by its task while `close` awaits this.
private struct UnsafeShutdown: @unchecked Sendable {
    let publisher: JetStreamPublisher
    func run() { publisher.shutDown() }
}
