package import BridgeSystem

/// How to reach one MQTT broker: `mqtt://[user[:password]@]host[:port]` or `mqtts://…` for TLS.
///
/// The session is persistent: the client id is fixed (derived from the sink's name by the caller) and
/// `clean_start` is false, so the broker keeps the session (and libmosquitto resends unacknowledged QoS 1/2
/// messages after a reconnect). TLS verifies the broker against the system's CAs plus `caFile`.
package struct MQTTSettings: Sendable, Equatable {
    /// The parsed URL.
    package var url: ServiceURL
    /// The client id: fixed, so the broker finds the session again.
    package var clientID: String
    /// 1 (at least once, PUBACK) or 2 (exactly once to the broker, PUBCOMP). Default: 1.
    package var qos: Int
    /// A PEM file of CA certificates trusted in addition to the system store (`mqtts://` only). Default: none.
    package var caFile: String?
    /// How long connecting (TCP, TLS, CONNECT/CONNACK) may take. Default: 5 s.
    package var connectTimeout: Duration
    /// The keep-alive interval the client announces (whole seconds, 5 or more). Default: 30 s.
    package var keepAlive: Duration
    /// How long the broker keeps the session after a disconnect (MQTT 5). Default: 1 day.
    package var sessionExpiry: Duration
    /// The most QoS 1/2 messages sent and not yet acknowledged; libmosquitto queues the rest. Default: 1,000.
    package var maxInFlight: Int

    /// Parses `url` and checks the settings; throws a configuration error saying what is wrong.
    package init(
        url: String,
        clientID: String,
        qos: Int = 1,
        caFile: String? = nil,
        connectTimeout: Duration = .seconds(5),
        keepAlive: Duration = .seconds(30),
        sessionExpiry: Duration = .seconds(86_400),
        maxInFlight: Int = 1_000
    ) throws(MQTTError) {
        do {
            self.url = try ServiceURL(url, defaultPorts: ["mqtt": 1883, "mqtts": 8883])
        } catch {
            throw MQTTError(kind: .configuration, message: error.message)
        }
        guard self.url.path.isEmpty else {
            throw MQTTError(kind: .configuration, message: "an MQTT URL has no path: \(self.url)")
        }
        guard (1...2).contains(qos) else { throw MQTTError(kind: .configuration, message: "qos must be 1 or 2") }
        guard !clientID.isEmpty, clientID.utf8.count <= 65_535, !clientID.utf8.contains(0) else {
            throw MQTTError(kind: .configuration, message: "the MQTT client id must be 1 to 65535 bytes")
        }
        guard (1...65_535).contains(maxInFlight) else {
            throw MQTTError(kind: .configuration, message: "max in flight must be 1...65535 (MQTT's packet ids)")
        }
        self.clientID = clientID
        self.qos = qos
        self.caFile = caFile
        self.connectTimeout = connectTimeout
        self.keepAlive = keepAlive
        self.sessionExpiry = sessionExpiry
        self.maxInFlight = maxInFlight
    }

    /// Whether the connection uses TLS (`mqtts://`).
    package var usesTLS: Bool { url.scheme == "mqtts" }

    /// The keep-alive in whole seconds, 5 to 65,535.
    var keepAliveSeconds: Int32 { Int32(min(65_535, max(5, keepAlive.components.seconds))) }

    /// The session expiry in whole seconds, 0 to 2³²−1.
    var sessionExpirySeconds: UInt32 { UInt32(clamping: max(0, sessionExpiry.components.seconds)) }

    /// The secrets of these settings (for a `Redactor`): the password.
    package var secretValues: [String] { url.password.map { [$0] } ?? [] }
}
