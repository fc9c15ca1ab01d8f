internal import BridgeSystem
internal import CMosquitto
import Synchronization

/// The connection's health as libmosquitto's callbacks report it.
package struct MQTTConnectionStatus: Sendable {
    /// Whether the client is connected (CONNACK accepted, not lost since).
    package var connected: Bool
    /// The MQTT version in use: 5 or 4 (3.1.1).
    package var protocolVersion: Int
    /// The last failure: a lost connection, a refused CONNACK (credentials changed after the start). Cleared by the
    /// next accepted CONNACK.
    package var lastError: MQTTError?
    /// How many times the connection was lost.
    package var disconnects: Int
    /// Why the last CONNACK refused the credentials, until one accepts them: the disconnect that follows a refusal
    /// replaces `lastError`, and a sink must still tell that the credentials are the problem.
    package var credentialsRefused: MQTTError? = nil
    /// The Receive Maximum of the broker's last accepted CONNACK (MQTT 5): how many QoS 1 and 2 publishes it takes
    /// unacknowledged at a time, which libmosquitto keeps to whatever `max_in_flight` says (mosquitto's default: 20).
    /// nil: no limit below 65,535, or MQTT 3.1.1.
    package var receiveMaximum: Int?
}

/// What libmosquitto's callbacks reach through their user data: the connection's health, the CONNACK waiter, and
/// the publishes awaiting their acknowledgement, by packet id (mid), under one lock. The callbacks, `sent` and
/// `failed` run on the client's network thread (`MQTTNetworkLoop`); the waits on the publishing task.
///
/// Lifetime: passed to libmosquitto unretained; the `MQTTClient` and its network thread's `MQTTNetworkLoop` hold it,
/// and the loop, whose calls into libmosquitto are the only place callbacks run, holds it until the thread ends.
final class MQTTClientCore: Sendable {
    private struct Batch {
        var outcomes: [MQTTOutcome?]
        var remaining: Int
        var waiter: CheckedContinuation<[MQTTOutcome], Never>?
        /// Called with the outcomes instead of a waiter (`openBatch(count:completion:)`): a batch without a timeout.
        var completion: (@Sendable ([MQTTOutcome]) -> Void)?
    }

    /// Whoever gets a finished batch's outcomes (its waiter or its completion), called outside the lock.
    private typealias Finish = (deliver: @Sendable ([MQTTOutcome]) -> Void, outcomes: [MQTTOutcome])

    private struct State {
        var status: MQTTConnectionStatus
        var connack: Int32?
        /// The first CONNACK's refusal, kept for `connect` (a disconnect right after it replaces `lastError`).
        var connackError: MQTTError?
        var connackWaiter: CheckedContinuation<Int32, Never>?
        /// `firstConnack`'s deadline passed (`endConnackWait`): a waiter registering after it returns at once.
        var connackWaitEnded = false
        var batches: [Int: Batch] = [:]
        var nextBatch = 0
        /// Published, not yet acknowledged: the batch and index of each packet id. A packet id is recorded on the
        /// network thread right after its publish and before that thread reads any acknowledgement, so an
        /// acknowledgement of an id not here is a late one (its batch's wait ended) and is ignored.
        var pending: [Int32: (batch: Int, index: Int)] = [:]
    }

    private let state: Mutex<State>

    init(protocolVersion: Int) {
        state = Mutex(
            State(
                status: MQTTConnectionStatus(
                    connected: false,
                    protocolVersion: protocolVersion,
                    lastError: nil,
                    disconnects: 0,
                    receiveMaximum: nil
                )
            )
        )
    }

    /// The current health.
    var status: MQTTConnectionStatus { state.withLock { $0.status } }

    /// Whether the broker accepted the current connection (its CONNACK), without copying the whole status.
    var isConnected: Bool { state.withLock { $0.status.connected } }

    /// Why the first CONNACK refused the connection, if it did.
    var connackError: MQTTError? { state.withLock { $0.connackError } }

    // MARK: - CONNACK

    /// Waits for the first CONNACK's code, or nil when `deadline` passes first.
    func firstConnack(until deadline: ContinuousClock.Instant) async -> Int32? {
        let timer = Task {
            // The CONNACK's deadline: a real timer (the CONNACK itself resumes the waiter below).
            guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
            self.endConnackWait()
        }
        defer { timer.cancel() }
        let code = await withCheckedContinuation { continuation in
            let code = state.withLock { state -> Int32? in
                if let code = state.connack { return code }
                if state.connackWaitEnded { return Self.connackWaitTimedOut }
                state.connackWaiter = continuation
                return nil
            }
            if let code { continuation.resume(returning: code) }
        }
        return code == Self.connackWaitTimedOut ? nil : code
    }

    /// Ends the wait for the first CONNACK as timed out (its deadline's timer): a waiter now, or one that registers
    /// only later (its task ran after the timer's, as on a starved cooperative pool), gets nil at once instead of
    /// waiting for a CONNACK or a disconnect that may never come.
    func endConnackWait() {
        let waiter = state.withLock { state in
            state.connackWaitEnded = true
            defer { state.connackWaiter = nil }
            return state.connackWaiter
        }
        waiter?.resume(returning: Self.connackWaitTimedOut)
    }

    /// The "code" of a wait for the first CONNACK that its deadline ended (no CONNACK code is negative).
    private static let connackWaitTimedOut: Int32 = -1

    /// A CONNACK arrived (the network thread): `code` 0 accepted, else refused with that (3.1.1 or 5) code.
    func connected(code: Int32, error: MQTTError?, receiveMaximum: Int? = nil) {
        let waiter = state.withLock { state in
            if state.connack == nil {
                state.connack = code
                state.connackError = error
            }
            state.status.connected = code == 0
            state.status.lastError = code == 0 ? nil : error
            if code == 0 {
                state.status.credentialsRefused = nil
            } else if error?.kind == .authentication {
                state.status.credentialsRefused = error
            }
            if code == 0 { state.status.receiveMaximum = receiveMaximum }
            defer { state.connackWaiter = nil }
            return state.connackWaiter
        }
        waiter?.resume(returning: code)
    }

    /// The connection was lost (the network thread, which reconnects) or closed (no error). Before the
    /// first CONNACK it ends `connect`'s wait with `error`: a TLS handshake the broker's certificate failed, for
    /// one, ends here, not in a CONNACK.
    func disconnected(error: MQTTError?) {
        let waiter = state.withLock { state -> CheckedContinuation<Int32, Never>? in
            state.status.connected = false
            if let error {
                state.status.lastError = error
                state.status.disconnects += 1
            }
            let reason = error ?? MQTTError(kind: .retriable, message: "disconnected before the CONNACK")
            return Self.endFirstConnackWait(&state, code: Self.lostBeforeConnack, error: reason)
        }
        waiter?.resume(returning: Self.lostBeforeConnack)
    }

    /// Ends the wait for the first CONNACK with `code` and `error` unless a code came before; returns the waiter
    /// to resume (outside the lock).
    private static func endFirstConnackWait(_ state: inout State, code: Int32, error: MQTTError)
        -> CheckedContinuation<Int32, Never>?
    {
        guard state.connack == nil else { return nil }
        state.connack = code
        state.connackError = error
        defer { state.connackWaiter = nil }
        return state.connackWaiter
    }

    /// The "code" of a connection lost before its first CONNACK (no CONNACK code is negative).
    static let lostBeforeConnack: Int32 = -2

    /// The first connect failed before a CONNECT was sent (the network thread): ends `connect`'s wait with `error`.
    func connectFailed(error: MQTTError) {
        let waiter = state.withLock { state -> CheckedContinuation<Int32, Never>? in
            state.status.lastError = error
            return Self.endFirstConnackWait(&state, code: Self.connectFailed, error: error)
        }
        waiter?.resume(returning: Self.connectFailed)
    }

    /// The "code" of a first connect that failed before its CONNECT (no CONNACK code is negative).
    static let connectFailed: Int32 = -3

    // MARK: - Publishes

    /// Opens a batch of `count` publishes; with `completion`, the batch ends only when every publish has its
    /// outcome (an acknowledgement, a failed publish, or `abandonAll`), and `completion` gets them.
    func openBatch(count: Int, completion: (@Sendable ([MQTTOutcome]) -> Void)? = nil) -> Int {
        state.withLock { state in
            let id = state.nextBatch
            state.nextBatch += 1
            state.batches[id] = Batch(
                outcomes: Array(repeating: nil, count: count), remaining: count, waiter: nil, completion: completion)
            return id
        }
    }

    /// Ends every open batch: each publish without an outcome yet fails with `error` (the client is closing, and
    /// libmosquitto's messages go with it). A late acknowledgement is then ignored.
    func abandonAll(error: MQTTError) {
        let finished = state.withLock { state -> [Finish] in
            state.pending.removeAll()
            var finished: [Finish] = []
            for (batch, entry) in state.batches {
                for index in entry.outcomes.indices where entry.outcomes[index] == nil {
                    if let finish = Self.record(.failed(error), batch: batch, index: index, in: &state) {
                        finished.append(finish)
                    }
                }
            }
            return finished
        }
        for finish in finished { finish.deliver(finish.outcomes) }
    }

    /// Whether `batch` still waits for outcomes (its timeout has not ended the wait).
    func isOpen(batch: Int) -> Bool {
        state.withLock { $0.batches[batch] != nil }
    }

    /// Publish `index` of `batch` went out as packet `mid` (the network thread, before it reads acknowledgements).
    func sent(mid: Int32, batch: Int, index: Int) {
        state.withLock { state in
            guard state.batches[batch] != nil else { return }  // its wait ended meanwhile: no outcome is awaited
            state.pending[mid] = (batch, index)
        }
    }

    /// Publish `index` of `batch` was never sent.
    func failed(batch: Int, index: Int, error: MQTTError) {
        let finish = state.withLock { Self.record(.failed(error), batch: batch, index: index, in: &$0) }
        finish.map { $0.deliver($0.outcomes) }
    }

    /// The broker acknowledged packet `mid` (PUBACK or PUBCOMP) with `reasonCode` (the network thread).
    func acknowledged(mid: Int32, reasonCode: Int32) {
        let finish = state.withLock { state -> Finish? in
            guard let (batch, index) = state.pending.removeValue(forKey: mid) else { return nil }
            return Self.record(Self.outcome(reasonCode: reasonCode), batch: batch, index: index, in: &state)
        }
        finish.map { $0.deliver($0.outcomes) }
    }

    /// Waits until every publish of `batch` has its outcome, or `timeout` passed: those still unacknowledged then,
    /// or not yet published (the network thread was reconnecting), fail as retriable (libmosquitto keeps and resends
    /// what it has; a late acknowledgement is ignored).
    func outcomes(of batch: Int, timeout: Duration) async -> [MQTTOutcome] {
        await withTaskGroup(of: [MQTTOutcome]?.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let done = self.state.withLock { state -> [MQTTOutcome]? in
                        guard let entry = state.batches[batch] else { return [] }
                        if entry.remaining == 0 {
                            state.batches.removeValue(forKey: batch)
                            return entry.outcomes.map { $0! }
                        }
                        state.batches[batch]?.waiter = continuation
                        return nil
                    }
                    if let done { continuation.resume(returning: done) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)  // the acknowledgements' deadline: a real timer
                return nil
            }
            var outcomes = await group.next() ?? nil
            let late = MQTTError(kind: .retriable, message: "no acknowledgement within \(timeout)")
            let finish = state.withLock { state -> Finish? in
                for (mid, entry) in state.pending where entry.batch == batch {
                    state.pending.removeValue(forKey: mid)
                }
                guard let recorded = state.batches[batch]?.outcomes else { return nil }
                var result: Finish?
                for index in recorded.indices where recorded[index] == nil {
                    result = Self.record(.failed(late), batch: batch, index: index, in: &state) ?? result
                }
                return result
            }
            finish.map { $0.deliver($0.outcomes) }
            group.cancelAll()
            for await result in group where outcomes == nil { outcomes = result }
            return outcomes ?? []
        }
    }

    private static func record(
        _ outcome: MQTTOutcome,
        batch: Int,
        index: Int,
        in state: inout State
    ) -> Finish? {
        guard state.batches[batch]?.outcomes[index] == nil else { return nil }
        state.batches[batch]?.outcomes[index] = outcome
        state.batches[batch]?.remaining -= 1
        guard let entry = state.batches[batch], entry.remaining == 0 else { return nil }
        let deliver: @Sendable ([MQTTOutcome]) -> Void
        if let completion = entry.completion {
            deliver = completion
        } else if let waiter = entry.waiter {
            deliver = { waiter.resume(returning: $0) }
        } else {
            return nil  // `outcomes(of:timeout:)` has not registered yet: it finds the batch done
        }
        state.batches.removeValue(forKey: batch)
        return (deliver, entry.outcomes.map { $0! })
    }

    /// A PUBACK/PUBCOMP reason code as an outcome: below 0x80 is success (0x10: no subscriber matched, still
    /// accepted); 0x87 (not authorized) an authentication failure; other refusals are final for the message.
    static func outcome(reasonCode: Int32) -> MQTTOutcome {
        if reasonCode < 0x80 { return .acknowledged }
        let text = PeerText.string(mosquitto_reason_string(reasonCode))
        if reasonCode == Int32(MQTT_RC_NOT_AUTHORIZED.rawValue) {
            return .failed(MQTTError(kind: .authentication, message: "the broker refused the publish: \(text)"))
        }
        if reasonCode == Int32(MQTT_RC_QUOTA_EXCEEDED.rawValue) || reasonCode == Int32(MQTT_RC_UNSPECIFIED.rawValue) {
            return .failed(MQTTError(kind: .retriable, message: "the broker refused the publish: \(text)"))
        }
        return .failed(MQTTError(kind: .rejected, message: "the broker refused the publish: \(text) (\(reasonCode))"))
    }
}
