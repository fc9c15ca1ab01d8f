internal import BridgeSystem
internal import CMosquitto

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A `struct mosquitto *`, destroyed when the last of its two users lets go of it: the client configures it, then
/// only the client's network thread (`MQTTNetworkLoop`), which connects it, calls libmosquitto with it. The thread
/// may outlive the client: neither a connect's wait nor a stop waits out its first connect's TCP connect or a name
/// look-up (`MQTTClient.shutDown`).
final class MosquittoHandle: @unchecked Sendable {
    // @unchecked: used by one thread at a time, as above; libmosquitto calls no callback from mosquitto_destroy.
    let pointer: OpaquePointer

    init(pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        mosquitto_destroy(pointer)
    }
}

/// An MQTT client for one broker on libmosquitto: MQTT 5 (3.1.1 when the broker refuses 5), a persistent session,
/// QoS 1 or 2 publishes counted as delivered on PUBACK or PUBCOMP.
///
/// The connection runs on a thread of the client's own (`MQTTNetworkLoop`), which publishes each batch, reads the
/// acknowledgements, reconnects with backoff (libmosquitto resends unacknowledged publishes after a reconnect);
/// `status` tells how the connection is. Connecting waits for the thread's first CONNACK until the connect timeout;
/// closing joins the thread on `BlockingExecutor`. Confined to one task (not Sendable).
package final class MQTTClient {
    private let core: MQTTClientCore
    private let network: NetworkThread
    /// The settings it connected with.
    package let settings: MQTTSettings
    private var closed = false

    /// The client's network loop and its thread.
    private struct NetworkThread: Sendable {
        let loop: MQTTNetworkLoop
        let thread: DetachedThread.Joinable
    }

    private init(core: MQTTClientCore, network: NetworkThread, settings: MQTTSettings) {
        self.core = core
        self.network = network
        self.settings = settings
    }

    /// Dropped without `close()`: the shut-down (the network thread's stop and join, at most the connect timeout)
    /// goes to `BlockingExecutor.shared`, as `close()`'s does, not to the dropping thread, often a cooperative one.
    deinit {
        guard !closed else { return }
        let (network, bound, core) = (network, settings.connectTimeout, core)
        BlockingExecutor.shared.submit {
            Self.shutDown(network, waiting: bound)
            core.abandonAll(error: Self.closedBeforeAcknowledgement)
        }
    }

    /// What a publish still unacknowledged when the client closes fails with.
    private static let closedBeforeAcknowledgement = MQTTError(
        kind: .retriable, message: "the client closed before the broker acknowledged the publish")

    /// libmosquitto's global state, set up once per process.
    private static let library: Void = { _ = mosquitto_lib_init() }()

    /// Connects with MQTT 5, or with 3.1.1 when the broker refuses 5, and waits for the broker's CONNACK; throws
    /// a typed error (retriable, authentication, configuration).
    package static func connect(settings: MQTTSettings) async throws(MQTTError) -> MQTTClient {
        _ = library
        if let client = try await connect(settings: settings, protocolVersion: MQTT_PROTOCOL_V5) { return client }
        guard let client = try await connect(settings: settings, protocolVersion: MQTT_PROTOCOL_V311) else {
            throw MQTTError(kind: .retriable, message: "\(settings.url) refused MQTT 5 and MQTT 3.1.1")
        }
        return client
    }

    /// A connected client, or nil when the broker refused `protocolVersion`.
    private static func connect(settings: MQTTSettings, protocolVersion: Int32) async throws(MQTTError)
        -> MQTTClient?
    {
        // The connect timeout bounds the whole attempt from here: TCP, TLS, CONNECT and the CONNACK, however long
        // the task waited for a thread between those steps.
        let deadline = ContinuousClock.now + settings.connectTimeout
        let core = MQTTClientCore(protocolVersion: Int(protocolVersion))
        // Unretained: libmosquitto calls back only from the network thread's loop, whose MQTTNetworkLoop holds the
        // core while the thread runs.
        guard let raw = mosquitto_new(settings.clientID, false, Unmanaged.passUnretained(core).toOpaque()) else {
            throw MQTTError(kind: .retriable, message: "libmosquitto could not allocate a client")
        }
        let handle = MosquittoHandle(pointer: raw)
        var started: NetworkThread?
        func fail() async {
            if let started {
                // Within what is left of the connect timeout: a thread still inside its first connect is left to
                // end by itself.
                let left = max(.zero, deadline - .now)
                _ = try? await BlockingExecutor.shared.perform { shutDown(started, waiting: left) }
            }
        }
        do throws(MQTTError) {
            try configure(handle, settings: settings, protocolVersion: protocolVersion)
            let loop = try MQTTNetworkLoop(
                handle: handle,
                core: core,
                settings: settings,
                protocolVersion: protocolVersion
            )
            let network: NetworkThread
            do {
                network = NetworkThread(loop: loop, thread: try DetachedThread.startJoinable { loop.run() })
            } catch {
                throw MQTTError(kind: .retriable, message: "could not start the client's network thread: \(error)")
            }
            started = network
            guard let code = await core.firstConnack(until: deadline) else {
                throw MQTTError(
                    kind: .retriable,
                    message: "\(settings.url) sent no CONNACK within \(settings.connectTimeout)"
                )
            }
            if code == MQTTClientCore.connectFailed, let failure = core.connackError { throw failure }
            if code != 0 {
                if protocolVersion == MQTT_PROTOCOL_V5 && (code == 1 || code == 132) {
                    await fail()
                    return nil
                }
                if code == MQTTClientCore.lostBeforeConnack, let lost = core.connackError {
                    // libmosquitto's keep-alive gives up on a broker that never sends the CONNACK (after
                    // keep_alive, which may be shorter than the connect timeout), a TLS handshake fails, the
                    // broker closes: each ends the connection before the CONNACK, which the error says.
                    throw MQTTError(
                        kind: lost.kind,
                        message: "\(settings.url) ended the connection before its CONNACK: \(lost.message)"
                    )
                }
                throw core.connackError ?? MQTTError(kind: .retriable, message: "CONNACK \(code)")
            }
            return MQTTClient(core: core, network: network, settings: settings)
        } catch {
            await fail()
            throw error
        }
    }

    private static func configure(_ handle: MosquittoHandle, settings: MQTTSettings, protocolVersion: Int32)
        throws(MQTTError)
    {
        let raw = handle.pointer
        _ = mosquitto_int_option(raw, MOSQ_OPT_PROTOCOL_VERSION, protocolVersion)
        if let user = settings.url.user ?? (settings.url.password != nil ? "" : nil) {
            try check(mosquitto_username_pw_set(raw, user, settings.url.password), "setting the credentials")
        }
        if settings.usesTLS {
            // The system store (its hashed directory) plus the CA file, as the bridge's other clients trust.
            let caFile = settings.caFile.flatMap { $0.isEmpty ? nil : $0 }
            if let caFile, access(caFile, R_OK) != 0 {
                throw MQTTError(kind: .configuration, message: "cannot read the CA file \(caFile)")
            }
            try check(mosquitto_tls_set(raw, caFile, "/etc/ssl/certs", nil, nil, nil), "setting up TLS")
            _ = mosquitto_int_option(raw, MOSQ_OPT_TLS_USE_OS_CERTS, 1)
        }
        _ = mosquitto_max_inflight_messages_set(raw, UInt32(settings.maxInFlight))
        mosquitto_connect_v5_callback_set(raw, mqttConnected)
        mosquitto_disconnect_v5_callback_set(raw, mqttDisconnected)
        mosquitto_publish_v5_callback_set(raw, mqttPublished)
        mosquitto_log_callback_set(raw, mqttLogged)
    }

    /// TCP, the start of TLS and the CONNECT packet (blocking; the network thread's first step); the CONNACK comes
    /// through its loop.
    static func openConnection(_ handle: MosquittoHandle, settings: MQTTSettings, protocolVersion: Int32)
        throws(MQTTError)
    {
        var properties: OpaquePointer?
        defer { mosquitto_property_free_all(&properties) }
        if protocolVersion == MQTT_PROTOCOL_V5 {
            _ = mosquitto_property_add_int32(
                &properties,
                Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue),
                settings.sessionExpirySeconds
            )
        }
        let result = mosquitto_connect_bind_v5(
            handle.pointer,
            settings.url.host,
            Int32(settings.url.port),
            settings.keepAliveSeconds,
            nil,
            properties
        )
        if result == MOSQ_ERR_SUCCESS.rawValue { return }
        let code = errno
        throw error(result, errno: code, context: "connecting to \(settings.url)")
    }

    // MARK: - Publishing

    /// Publishes `messages` with the settings' QoS and waits up to `timeout` for every acknowledgement; one
    /// outcome per message, in order. Unacknowledged by then: failed, retriable (libmosquitto still holds and
    /// resends them: a retry may deliver a message twice, which QoS 1 allows). For a one-off publish (`check
    /// --send-test-event`); a sink uses `publish(_:completion:)`.
    ///
    /// The batch crosses to the network thread once, which publishes it there and matches the acknowledgements;
    /// the task waits suspended.
    package func publish(_ messages: [MQTTMessage], timeout: Duration) async -> [MQTTOutcome] {
        guard !messages.isEmpty else { return [] }
        let batch = core.openBatch(count: messages.count)
        network.loop.submit(batch: batch, messages: messages)
        return await core.outcomes(of: batch, timeout: timeout)
    }

    /// Publishes `messages` with the settings' QoS and returns; `completion` gets one outcome per message, in order,
    /// on the network thread, once each has one: its acknowledgement, its publish failed, or the client closed
    /// (retriable). No timeout: libmosquitto holds an unacknowledged publish however long the broker takes, through
    /// a reconnect (it resends it with its packet id), so publishing it again beside that would deliver it twice
    /// (with QoS 2 too) — as a hung broker did, once per timeout (docs/RELIABILITY.md, "The broker sinks at scale").
    /// The caller bounds what it has outstanding and tells a stalled broker by the time its outcomes take.
    package func publish(_ messages: [MQTTMessage], completion: @escaping @Sendable ([MQTTOutcome]) -> Void) {
        guard !messages.isEmpty else { return completion([]) }
        let batch = core.openBatch(count: messages.count, completion: completion)
        network.loop.submit(batch: batch, messages: messages)
    }

    /// The connection's health.
    package var status: MQTTConnectionStatus { core.status }

    // MARK: - Closing

    /// Disconnects (a normal DISCONNECT: the session stays on the broker) and ends the network thread; publishes
    /// still unacknowledged then fail as retriable.
    package func close() async {
        guard !closed else { return }
        closed = true
        let network = self.network
        let bound = settings.connectTimeout
        _ = try? await BlockingExecutor.shared.perform { Self.shutDown(network, waiting: bound) }
        core.abandonAll(error: Self.closedBeforeAcknowledgement)
    }

    /// Stops the network thread (it sends DISCONNECT as it ends) and waits for it, at most `bound` (the connect
    /// timeout). A thread inside its first connect (the TCP connect blocks: the kernel's SYN retries, about two
    /// minutes, to an address that drops them) or a name look-up (the resolver's timeouts) is left to end by itself:
    /// its loop holds the handle and the core its callbacks use, and the handle is destroyed when the thread lets go
    /// of it.
    private static func shutDown(_ network: NetworkThread, waiting bound: Duration) {
        network.loop.stop()
        _ = network.thread.join(until: .now + bound)
    }

    // MARK: - Errors

    /// Throws `result` as a typed error unless it is MOSQ_ERR_SUCCESS. `context` is made only for an error: the
    /// publishing thread checks five user properties per message.
    static func check(_ result: Int32, _ context: @autoclosure () -> String) throws(MQTTError) {
        guard result == MOSQ_ERR_SUCCESS.rawValue else {
            let code = errno
            throw error(result, errno: code, context: context())
        }
    }

    /// libmosquitto's result `code` as a typed error (`errno` for MOSQ_ERR_ERRNO).
    static func error(_ code: Int32, errno: Int32, context: String) -> MQTTError {
        let text =
            code == MOSQ_ERR_ERRNO.rawValue
            ? SystemError(operation: context, errno: errno).description
            : context + ": " + PeerText.string(mosquitto_strerror(code))
        switch code {
        case MOSQ_ERR_TLS.rawValue, MOSQ_ERR_AUTH.rawValue, MOSQ_ERR_NOT_SUPPORTED.rawValue:
            return MQTTError(kind: .authentication, message: text)
        case MOSQ_ERR_INVAL.rawValue, MOSQ_ERR_MALFORMED_UTF8.rawValue:
            return MQTTError(kind: .configuration, message: text)
        case MOSQ_ERR_PAYLOAD_SIZE.rawValue, MOSQ_ERR_OVERSIZE_PACKET.rawValue, MOSQ_ERR_QOS_NOT_SUPPORTED.rawValue:
            return MQTTError(kind: .rejected, message: text)
        default:
            return MQTTError(kind: .retriable, message: text)
        }
    }
}
