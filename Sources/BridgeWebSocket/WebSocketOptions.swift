public import BridgeSystem
public import BridgeTLS

/// How a `WebSocketConnection` connects and behaves. Every field has a default.
public struct WebSocketOptions: Sendable {
    /// Bound on opening the connection: TCP connect (over all addresses), TLS handshake and HTTP upgrade
    /// together. Name resolution comes on top. Default: 10 s.
    public var connectTimeout: Duration
    /// Bound on one send when the peer does not read (socket buffer full). Default: 10 s.
    public var writeTimeout: Duration
    /// How long `close` waits for the peer's close frame. Default: 5 s.
    public var closeTimeout: Duration
    /// Certificate verification for `wss://`. Default: system trust store, verification on.
    public var tls: TLSConfiguration
    /// Extra request headers for the upgrade (`Authorization`, `Cookie`, `User-Agent`, …). Names and values
    /// must not contain line breaks. Default: none.
    public var headers: [(String, String)]
    /// The largest message accepted; a bigger one closes the connection with 1009, or is skipped with
    /// `skipsOversizedMessages`. Default: 16 MiB.
    public var maxMessageSize: Int
    /// A data message over `maxMessageSize` is read past without being kept, logged at error level and counted
    /// (`WebSocketConnection.skippedMessages`), and the connection goes on. For a peer that sends the same oversized
    /// message again after every reconnect (Directus's subscription `init`). Default: false (1009).
    public var skipsOversizedMessages: Bool
    /// Size of the read buffer; each read asks the kernel (or TLS) for up to this much. Default: 64 KiB.
    public var readBufferSize: Int
    /// TCP keep-alive idle time (first probe after this much silence; the kernel gives up after three more
    /// probes a third of it apart). `nil` leaves keep-alive off; the application heartbeat is the primary
    /// dead-peer check. Default: 30 s.
    public var tcpKeepAlive: Duration?
    /// The HTTP proxy the connection tunnels through (`CONNECT`); nil connects directly. No proxy comes from the
    /// environment. Default: nil.
    public var proxy: HTTPProxy?

    /// Creates options; every parameter has the default documented on its property.
    public init(
        connectTimeout: Duration = .seconds(10),
        writeTimeout: Duration = .seconds(10),
        closeTimeout: Duration = .seconds(5),
        tls: TLSConfiguration = TLSConfiguration(),
        headers: [(String, String)] = [],
        maxMessageSize: Int = 16 << 20,
        skipsOversizedMessages: Bool = false,
        readBufferSize: Int = 64 << 10,
        tcpKeepAlive: Duration? = .seconds(30),
        proxy: HTTPProxy? = nil
    ) {
        self.connectTimeout = connectTimeout
        self.writeTimeout = writeTimeout
        self.closeTimeout = closeTimeout
        self.tls = tls
        self.headers = headers
        self.maxMessageSize = maxMessageSize
        self.skipsOversizedMessages = skipsOversizedMessages
        self.readBufferSize = readBufferSize
        self.tcpKeepAlive = tcpKeepAlive
        self.proxy = proxy
    }
}
