public import BridgeSystem

extension LogKey {
    /// The socket address a WebSocket connection uses or tried (`127.0.0.1:8055`, `[::1]:8055`).
    public static let webSocketAddress = "websocket.address"
    /// The WebSocket URL, with any query (which may carry a token) elided.
    public static let webSocketURL = "websocket.url"
}
