internal import BridgeSystem
internal import CRdKafka

extension KafkaError.Code: CustomStringConvertible {
    /// librdkafka's name of the code (`NOT_LEADER_FOR_PARTITION`, `_TRANSPORT`), or `ERR_<n>` for a code it does
    /// not know (a broker may send any 16-bit number).
    package var description: String {
        guard Self.isKnown(rawValue), let name = rd_kafka_err2name(rd_kafka_resp_err_t(rawValue: rawValue)) else {
            return "ERR_\(rawValue)"
        }
        return String(cString: name)
    }

    /// librdkafka's sentence for the code, or a neutral one for codes it does not know.
    var explanation: String {
        guard Self.isKnown(rawValue), let text = rd_kafka_err2str(rd_kafka_resp_err_t(rawValue: rawValue)) else {
            return "error code \(rawValue) from the broker"
        }
        return String(cString: text)
    }

    /// Codes librdkafka 2.0 has names for: local codes between `_BEGIN` and `_END`, protocol codes 0...100.
    /// Anything else came from a broker newer than the library (or from a hostile peer) and is named by number.
    private static func isKnown(_ value: Int32) -> Bool {
        (-199 ... -101).contains(value) || (-1...100).contains(value)
    }
}

extension KafkaError {
    /// An error for librdkafka code `rawCode`, classified by what a caller can do about it. `detail` (a broker's or
    /// librdkafka's text, already cleaned with `PeerText`) is appended.
    static func from(
        code rawCode: Int32,
        detail: String? = nil,
        context: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> KafkaError {
        let code = Code(rawValue: rawCode)
        var message = code.explanation
        if let detail, !detail.isEmpty, detail != message { message += ": " + detail }
        if let context { message = context + ": " + message }
        return KafkaError(kind: Self.kind(of: code), code: code, message: message, file: file, line: line)
    }

    /// The kind of a code. Unknown codes count as retriable: a sink then keeps the event and tries again, which can
    /// never lose it (at-least-once), and the log shows the number.
    package static func kind(of code: Code) -> Kind {
        switch code.rawValue {
        // _AUTHENTICATION, _SSL (handshake or certificate refused), TOPIC/GROUP/CLUSTER_AUTHORIZATION_FAILED,
        // UNSUPPORTED_SASL_MECHANISM, ILLEGAL_SASL_STATE, TRANSACTIONAL_ID_AUTHORIZATION_FAILED, SECURITY_DISABLED,
        // SASL_AUTHENTICATION_FAILED, DELEGATION_TOKEN_AUTHORIZATION_FAILED.
        case -169, -181, 29, 30, 31, 33, 34, 53, 54, 58, 65:
            .authentication
        // _FATAL, _INCONSISTENT, _GAPLESS_GUARANTEE, _FENCED, OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_PRODUCER_EPOCH,
        // INVALID_PRODUCER_ID_MAPPING, UNKNOWN_PRODUCER_ID, _DESTROY (the producer is going away).
        case -150, -149, -148, -144, 45, 47, 49, 59, -197:
            .fatal
        // _BAD_MSG, _INVALID_ARG, _KEY/_VALUE_SERIALIZATION, INVALID_MSG, INVALID_MSG_SIZE, MSG_SIZE_TOO_LARGE,
        // TOPIC_EXCEPTION (invalid name), RECORD_LIST_TOO_LARGE, INVALID_REQUIRED_ACKS, INVALID_TIMESTAMP,
        // UNSUPPORTED_FOR_MESSAGE_FORMAT, POLICY_VIOLATION, INVALID_RECORD (87).
        case -199, -186, -162, -161, 2, 4, 10, 17, 18, 21, 32, 43, 44, 87:
            .rejected
        // _NOT_CONFIGURED, _UNKNOWN_PROTOCOL, _NOT_IMPLEMENTED, _UNSUPPORTED_FEATURE, UNSUPPORTED_VERSION.
        case -145, -171, -170, -165, 35:
            .configuration
        default:
            .retriable
        }
    }
}
