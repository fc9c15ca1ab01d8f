@testable import BridgeMQTT
import BridgeTestSupport
import Synchronization
import Testing

/// The MQTT client's shared state (`MQTTClientCore`), without a broker.
@Suite struct MQTTClientCoreTests {
    /// Whether a wait has returned, seen from the test's task.
    final class Ended: Sendable {
        let flag = Mutex(false)
    }

    /// `core.firstConnack(until: deadline)`, or nil with an issue recorded when it is still waiting `within`
    /// (stretched) from now; it is released with a CONNACK then, so that the test ends. The bounds are a minute:
    /// in a whole unit run on the loaded 2-core box, a 50 ms deadline's timer task once ran 25 s late (the
    /// cooperative pool was busy), and a bound only has to tell a late wait from one that never ends.
    func firstConnack(_ core: MQTTClientCore, until deadline: ContinuousClock.Instant, within: Duration)
        async throws -> Int32??
    {
        let ended = Ended()
        let wait = Task {
            let code = await core.firstConnack(until: deadline)
            ended.flag.withLock { $0 = true }
            return code
        }
        let bound = ContinuousClock.now + within * TestEnvironment.patience
        while !ended.flag.withLock({ $0 }) && ContinuousClock.now < bound {
            try await Task.sleep(for: .milliseconds(5))
        }
        guard ended.flag.withLock({ $0 }) else {
            Issue.record("the wait for the CONNACK outlived its deadline")
            core.connected(code: 0, error: nil)
            _ = await wait.value
            return nil
        }
        return .some(await wait.value)
    }

    /// The deadline's timer can end the wait before the waiting task has registered (both are tasks; on a starved
    /// cooperative pool the waiter's may run last): that waiter must return at once, not wait for a CONNACK (or
    /// libmosquitto's keep-alive disconnect, 30 s later) that nobody awaits any more.
    @Test func aWaitEndedBeforeItsWaiterRegisteredReturnsAtOnce() async throws {
        let core = MQTTClientCore(protocolVersion: 5)
        core.endConnackWait()
        let code = try await firstConnack(core, until: ContinuousClock.now + .seconds(3_600), within: .seconds(60))
        #expect(code == .some(nil))
    }

    /// The deadline ends a wait that no CONNACK answers; a CONNACK that came before the wait is its answer.
    @Test func theDeadlineOrAnEarlierCONNACKEndsTheWait() async throws {
        let silent = MQTTClientCore(protocolVersion: 5)
        let deadline = ContinuousClock.now + .milliseconds(50)
        let timedOut = try await firstConnack(silent, until: deadline, within: .seconds(60))
        #expect(timedOut == .some(nil))
        let refused = MQTTClientCore(protocolVersion: 5)
        refused.connected(code: 135, error: nil)
        let answer = try await firstConnack(refused, until: ContinuousClock.now + .seconds(3_600), within: .seconds(60))
        #expect(answer == .some(135))
    }

    /// A batch with a completion has no timeout: its outcomes come as the acknowledgements do, however late; a close
    /// (`abandonAll`) fails what is still unacknowledged as retriable, and an acknowledgement after that is ignored.
    /// A credentials refusal outlives the disconnect that follows it, until a CONNACK accepts the connection.
    @Test func aCompletionBatchEndsOnItsAcknowledgementsOrTheClose() {
        let core = MQTTClientCore(protocolVersion: 5)
        let delivered = Mutex<[[MQTTOutcome]]>([])
        let first = core.openBatch(count: 2) { outcomes in delivered.withLock { $0.append(outcomes) } }
        core.sent(mid: 1, batch: first, index: 0)
        core.sent(mid: 2, batch: first, index: 1)
        core.acknowledged(mid: 2, reasonCode: 0)
        #expect(delivered.withLock { $0.isEmpty })
        core.acknowledged(mid: 1, reasonCode: 0)
        #expect(delivered.withLock { $0.count == 1 && $0[0].allSatisfy { $0.error == nil } })

        let second = core.openBatch(count: 2) { outcomes in delivered.withLock { $0.append(outcomes) } }
        core.sent(mid: 3, batch: second, index: 0)
        core.sent(mid: 4, batch: second, index: 1)
        core.acknowledged(mid: 3, reasonCode: 0)
        core.abandonAll(error: MQTTError(kind: .retriable, message: "closed"))
        core.acknowledged(mid: 4, reasonCode: 0)
        let outcomes = delivered.withLock { $0.count == 2 ? $0[1] : [] }
        #expect(outcomes.count == 2 && outcomes[0].error == nil && outcomes[1].error?.kind == .retriable)

        core.connected(code: 135, error: MQTTError(kind: .authentication, message: "refused"))
        core.disconnected(error: MQTTError(kind: .retriable, message: "lost"))
        #expect(core.status.credentialsRefused?.kind == .authentication && core.status.lastError?.kind == .retriable)
        core.connected(code: 0, error: nil)
        #expect(core.status.credentialsRefused == nil)
    }
}
