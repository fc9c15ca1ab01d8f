public import BridgeSystem

extension LogKey {
    /// The socket address a WebSocket connection uses or tried (`127.0.0.1:8055`, `[::1]:8055`).
    public static let webSocketAddress = "websocket.address"
    /// The WebSocket URL, with any query (which may carry a token) elided.
    public static let webSocketURL = "websocket.url"
    /// The size of a message skipped for its size, in bytes.
    public static let webSocketMessageBytes = "websocket.message_bytes"
    /// The largest message a connection takes, in bytes.
    public static let webSocketMessageLimit = "websocket.message_limit"
}
