internal import BridgeSystem
internal import CRabbitMQ

extension AMQPConnection {
    /// basic.publish of `message` on `channel` (persistent, mandatory, its headers); librabbitmq's status.
    static func send(_ message: AMQPMessage, on connection: amqp_connection_state_t, channel: amqp_channel_t)
        -> Int32
    {
        let headers = Array(message.headers.prefix(16))
        var strings = [message.exchange, message.routingKey, message.messageID]
        strings += headers.flatMap { [$0.name, $0.value] }
        // Every string as bytes that stay put for the call (amqp_bytes_t points into them).
        let storage = strings.map { Array($0.utf8) }
        return withBytesArray(storage) { bytes in
            let names = (0..<headers.count).map { bytes[3 + 2 * $0] }
            let values = (0..<headers.count).map { bytes[4 + 2 * $0] }
            return message.body.withUnsafeBytes { body in
                camqp_publish(
                    connection,
                    channel,
                    bytes[0],
                    bytes[1],
                    bytes[2],
                    names,
                    values,
                    Int32(headers.count),
                    amqp_bytes_t(len: body.count, bytes: UnsafeMutableRawPointer(mutating: body.baseAddress))
                )
            }
        }
    }

    /// Runs `body` with an `amqp_bytes_t` for each of `arrays`, valid during the call.
    private static func withBytesArray<R>(_ arrays: [[UInt8]], _ body: ([amqp_bytes_t]) -> R) -> R {
        func step(_ index: Int, _ collected: [amqp_bytes_t]) -> R {
            guard index < arrays.count else { return body(collected) }
            return arrays[index].withUnsafeBytes { raw in
                step(
                    index + 1,
                    collected + [
                        amqp_bytes_t(len: raw.count, bytes: UnsafeMutableRawPointer(mutating: raw.baseAddress))
                    ]
                )
            }
        }
        return step(0, [])
    }

    /// librabbitmq's text for `status`.
    static func statusText(_ status: Int32) -> String {
        PeerText.string(amqp_error_string2(status))
    }
}
