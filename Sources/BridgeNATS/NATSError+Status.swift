internal import BridgeSystem
internal import CNats

extension NATSError {
    /// Whether the server said the thing asked for does not exist (a missing bucket or stream).
    package var isNotFound: Bool {
        status == Int32(bitPattern: NATS_NOT_FOUND.rawValue) || jetStreamCode == 10059
    }

    /// The libnats statuses of a TLS failure (`isTLSFailure`).
    static let tlsStatuses: Set<Int32> = Set(
        [NATS_SSL_ERROR, NATS_SECURE_CONNECTION_WANTED, NATS_SECURE_CONNECTION_REQUIRED].map {
            Int32(bitPattern: $0.rawValue)
        })

    /// An error for libnats status `status`, with libnats's last error text for this thread (or `text`) and the
    /// JetStream API code the server sent, classified by what a caller can do about it.
    static func from(
        status: natsStatus,
        jetStreamCode: Int = 0,
        text: String? = nil,
        context: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> NATSError {
        let code = (10_000...19_999).contains(jetStreamCode) ? jetStreamCode : 0  // the server's number, checked
        var message = PeerText.string(natsStatus_GetText(status))
        if let detail = text ?? lastErrorText(), !detail.isEmpty, detail != message { message += ": " + detail }
        if code != 0 { message += " (JetStream error \(code))" }
        if let context { message = context + ": " + message }
        return NATSError(
            kind: kind(of: status, jetStreamCode: code),
            status: Int32(bitPattern: status.rawValue),
            jetStreamCode: code,
            message: message,
            file: file,
            line: line
        )
    }

    /// libnats's error text for the calling thread's last failure (it keeps one per thread), with `redactor`'s
    /// secrets hidden, then cleaned.
    static func lastErrorText(redacting redactor: Redactor = Redactor()) -> String? {
        var status = NATS_OK
        guard let text = nats_GetLastError(&status) else { return nil }
        return PeerText.string(text, redacting: redactor)
    }

    /// The kind of a status (and JetStream code). Unknown combinations count as retriable: a sink keeps the
    /// event and tries again, which can never lose it.
    static func kind(of status: natsStatus, jetStreamCode: Int) -> Kind {
        switch status {
        case NATS_CONNECTION_AUTH_FAILED, NATS_NOT_PERMITTED, NATS_SSL_ERROR, NATS_SECURE_CONNECTION_WANTED,
            NATS_SECURE_CONNECTION_REQUIRED:
            return .authentication
        case NATS_CONNECTION_CLOSED:
            return .fatal
        case NATS_MAX_PAYLOAD:
            return .rejected
        case NATS_ADDRESS_MISSING, NATS_INVALID_ARG, NATS_INVALID_SUBJECT, NATS_INVALID_TIMEOUT,
            NATS_FAILED_TO_INITIALIZE, NATS_NO_SERVER_SUPPORT:
            return .configuration
        default:
            break
        }
        switch jetStreamCode {
        case 10054, 10109:  // message exceeds the stream's maximum size; sealed stream
            return .rejected
        case 10039, 10076:  // JetStream not enabled (for the account)
            return .configuration
        case 10071:  // wrong last sequence: a key-value compare-and-set lost to another writer
            return .conflict
        default:
            return .retriable
        }
    }
}
