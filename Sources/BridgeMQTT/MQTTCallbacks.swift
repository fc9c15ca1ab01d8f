internal import BridgeSystem
internal import CMosquitto

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

// libmosquitto's callbacks, as free functions matching the C typedefs. They run on the client's network thread
// (`MQTTNetworkLoop`), inside its calls into libmosquitto.

func mqttConnected(
    _ handle: OpaquePointer?,
    _ user: UnsafeMutableRawPointer?,
    _ code: Int32,
    _ flags: Int32,
    _ properties: OpaquePointer?
) {
    guard let user else { return }
    let core = Unmanaged<MQTTClientCore>.fromOpaque(user).takeUnretainedValue()
    guard code != 0 else {
        core.connected(code: 0, error: nil, receiveMaximum: receiveMaximum(in: properties))
        return
    }
    // 3.1.1 codes 4 and 5, MQTT 5's 0x86/0x87/0x8A (banned)/0x8C (bad authentication method): the credentials.
    let authentication: Set<Int32> = [2, 4, 5, 0x85, 0x86, 0x87, 0x8A, 0x8C]
    let text =
        core.status.protocolVersion == 5
        ? PeerText.string(mosquitto_reason_string(code))
        : PeerText.string(mosquitto_connack_string(code))
    core.connected(
        code: code,
        error: MQTTError(
            kind: authentication.contains(code) ? .authentication : .retriable,
            message: "the broker refused the connection: \(text)"
        )
    )
}

/// The Receive Maximum of a CONNACK's properties, when it names one below the protocol's 65,535 (0 is a protocol
/// error: no limit is assumed, as libmosquitto does).
private func receiveMaximum(in properties: OpaquePointer?) -> Int? {
    guard let properties else { return nil }
    var value: UInt16 = 0
    guard mosquitto_property_read_int16(properties, Int32(MQTT_PROP_RECEIVE_MAXIMUM.rawValue), &value, false) != nil,
        value > 0, value < UInt16.max
    else { return nil }
    return Int(value)
}

func mqttDisconnected(
    _ handle: OpaquePointer?,
    _ user: UnsafeMutableRawPointer?,
    _ code: Int32,
    _ properties: OpaquePointer?
) {
    guard let user else { return }
    let core = Unmanaged<MQTTClientCore>.fromOpaque(user).takeUnretainedValue()
    // `code` is libmosquitto's reason: MOSQ_ERR_TLS for a certificate refused in the handshake, which retrying
    // cannot fix, the connection's loss otherwise.
    core.disconnected(
        error: code == 0
            ? nil
            : code == MOSQ_ERR_TLS.rawValue
                ? MQTTError(kind: .authentication, message: "the TLS handshake with the broker failed")
                : MQTTError(
                    kind: .retriable,
                    message: "lost the connection to the broker, reconnecting: "
                        + "\(PeerText.string(mosquitto_strerror(code))) (\(code))"
                )
    )
}

func mqttPublished(
    _ handle: OpaquePointer?,
    _ user: UnsafeMutableRawPointer?,
    _ mid: Int32,
    _ reasonCode: Int32,
    _ properties: OpaquePointer?
) {
    guard let user else { return }
    acknowledgeAtOnce(handle)
    Unmanaged<MQTTClientCore>.fromOpaque(user).takeUnretainedValue().acknowledged(mid: mid, reasonCode: reasonCode)
}

/// Makes the kernel acknowledge what was just read (TCP_QUICKACK: a delayed acknowledgement is sent now). mosquitto
/// writes each PUBACK on its own with Nagle's algorithm on, so after the first PUBACK of a burst it holds the rest
/// until our TCP acknowledges that one; Linux delays that acknowledgement by at least 40 ms when we have nothing to
/// send it with, which is the case at every batch's end. Each batch then waited 40 ms for its last PUBACKs (the
/// MQTT sink's pages: 8k events/s; 27–41k with this, BENCHMARKS.md "MQTT: the batch-end stall"). One system call
/// per PUBACK; TCP_QUICKACK does not stay set, so it is asked after each read.
private func acknowledgeAtOnce(_ handle: OpaquePointer?) {
    guard let handle else { return }
    let socket = mosquitto_socket(handle)
    guard socket >= 0 else { return }
    var on: Int32 = 1
    _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_QUICKACK, &on, socklen_t(MemoryLayout<Int32>.size))
}

/// libmosquitto's log lines: only its OpenSSL errors are used. A TLS handshake that fails (the broker's certificate
/// refused) makes `mosquitto_loop` return MOSQ_ERR_TLS without a disconnect callback: the error line is the only
/// word of why, so it ends `connect`'s wait for the CONNACK (the network thread then reconnects with backoff).
func mqttLogged(
    _ handle: OpaquePointer?,
    _ user: UnsafeMutableRawPointer?,
    _ level: Int32,
    _ text: UnsafePointer<CChar>?
) {
    guard let user, level == MOSQ_LOG_ERR, let text, strstr(text, "OpenSSL") != nil else { return }
    let core = Unmanaged<MQTTClientCore>.fromOpaque(user).takeUnretainedValue()
    core.disconnected(
        error: MQTTError(kind: .authentication, message: "TLS with the broker failed: \(PeerText.string(text))")
    )
}
