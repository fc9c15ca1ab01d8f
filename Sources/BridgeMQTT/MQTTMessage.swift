internal import BridgeSystem

/// One message to publish.
package struct MQTTMessage: Sendable, Equatable {
    /// One MQTT 5 user property (a name and a value; sent only over MQTT 5).
    package struct UserProperty: Sendable, Equatable {
        /// The property's name.
        package var name: String
        /// The property's value.
        package var value: String

        /// Creates a property.
        package init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The topic (no wildcards).
    package var topic: String
    /// The payload bytes (empty with `retain` clears the topic's retained message).
    package var payload: [UInt8]
    /// Whether the broker keeps it as the topic's retained message.
    package var retain: Bool
    /// User properties (MQTT 5 only; dropped over 3.1.1).
    package var userProperties: [UserProperty]

    /// Creates a message.
    package init(topic: String, payload: [UInt8], retain: Bool = false, userProperties: [UserProperty] = []) {
        self.topic = topic
        self.payload = payload
        self.retain = retain
        self.userProperties = userProperties
    }
}

/// What became of one message.
package enum MQTTOutcome: Sendable {
    /// The broker acknowledged it: PUBACK (QoS 1) or PUBCOMP (QoS 2) with a success reason code.
    case acknowledged
    /// Not acknowledged: the error says whether a retry can help.
    case failed(MQTTError)

    /// The error, when not acknowledged.
    package var error: MQTTError? {
        if case .failed(let error) = self { return error }
        return nil
    }
}

/// MQTT's rule for publish topics: 1 to 65,535 bytes of UTF-8, no NUL, no wildcard (`+`, `#`).
package enum MQTTTopic {
    /// Throws a `rejected` error naming what is wrong with `topic`.
    package static func validate(_ topic: String) throws(MQTTError) {
        let bytes = topic.utf8
        guard !bytes.isEmpty, bytes.count <= 65_535,
            !bytes.contains(where: { $0 == 0 || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") })
        else {
            throw MQTTError(kind: .rejected, message: "invalid MQTT topic \"\(topic.prefix(80))\"")
        }
    }
}
