public import BridgeSystem

/// Where Directus is and how the bridge connects to it (`directus`).
public struct DirectusConfig: Sendable, Equatable {
    /// The Directus base URL (`directus.url`), http or https, optionally with a path prefix for a reverse proxy
    /// sub-path. Required.
    public var url: HTTPURL
    /// The realtime endpoint's path, appended to the path of `url` (`directus.websocket_path`).
    /// Default: `/websocket`.
    public var websocketPath: String
    /// Credentials and socket authentication mode (`directus.auth`).
    public var auth: AuthConfig
    /// Extra trust settings for https/wss (`directus.tls`).
    public var tls: TLSConfig
    /// Limit for establishing a TCP (and TLS) connection (`directus.connect_timeout`). Default: 10s.
    public var connectTimeout: Duration
    /// Limit for one REST request (`directus.request_timeout`). Default: 30s.
    public var requestTimeout: Duration
    /// Interval of the bridge's own JSON pings; no traffic for twice this means a dead connection
    /// (`directus.heartbeat`). Default: 25s.
    public var heartbeat: Duration
    /// Backoff between connection attempts (`directus.reconnect`).
    public var reconnect: ReconnectConfig
    /// The HTTP proxy that REST requests and the socket both tunnel through (`directus.proxy`); nil connects
    /// directly, whatever `http_proxy` and the like say. Default: nil.
    public var proxy: HTTPProxy?

    /// The default of `websocketPath`.
    public static let defaultWebsocketPath = "/websocket"
    /// The default of `connectTimeout`.
    public static let defaultConnectTimeout: Duration = .seconds(10)
    /// The default of `requestTimeout`.
    public static let defaultRequestTimeout: Duration = .seconds(30)
    /// The default of `heartbeat`.
    public static let defaultHeartbeat: Duration = .seconds(25)

    /// Creates a Directus configuration with the contract's defaults for everything but `url`.
    public init(
        url: HTTPURL,
        websocketPath: String = DirectusConfig.defaultWebsocketPath,
        auth: AuthConfig = AuthConfig(),
        tls: TLSConfig = TLSConfig(),
        connectTimeout: Duration = DirectusConfig.defaultConnectTimeout,
        requestTimeout: Duration = DirectusConfig.defaultRequestTimeout,
        heartbeat: Duration = DirectusConfig.defaultHeartbeat,
        reconnect: ReconnectConfig = ReconnectConfig(),
        proxy: HTTPProxy? = nil
    ) {
        self.url = url
        self.websocketPath = websocketPath
        self.auth = auth
        self.tls = tls
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.heartbeat = heartbeat
        self.reconnect = reconnect
        self.proxy = proxy
    }

    /// The REST base URL without a trailing slash (`https://host/cms`); append `/auth/login` and the like.
    public var restBaseURL: String {
        url.scheme + "://" + url.authority + url.pathWithoutTrailingSlash
    }

    /// The path of the WebSocket endpoint (`/cms/websocket`), the request target of the upgrade request.
    public var websocketRequestPath: String {
        url.pathWithoutTrailingSlash + websocketPath
    }

    /// The realtime URL: `ws`/`wss` for `http`/`https`, `websocket_path` appended to the URL's path
    /// (`https://host/cms` gives `wss://host/cms/websocket`).
    public var websocketURL: String {
        (url.isTLS ? "wss" : "ws") + "://" + url.authority + websocketRequestPath
    }
}

/// Credentials and the socket authentication mode (`directus.auth`).
public struct AuthConfig: Sendable, Equatable {
    /// Exactly one of a static token, email + password (+ OTP), or none (public access).
    /// Default: none, which is valid only with `mode: public`.
    public var credentials: AuthCredentials
    /// How the WebSocket authenticates (`directus.auth.mode`). Default: `handshake`.
    public var mode: AuthMode

    /// Creates an auth configuration.
    public init(credentials: AuthCredentials = .none, mode: AuthMode = .handshake) {
        self.credentials = credentials
        self.mode = mode
    }
}

/// What the bridge logs in with.
public enum AuthCredentials: Sendable, Equatable {
    /// A static token (`token` or `token_file`), sent as is; it never expires.
    case token(String)
    /// REST login (`email` + `password`/`password_file`, optional `otp`), refreshed before expiry.
    case login(email: String, password: String, otp: String?)
    /// Public access: no credentials (`mode: public`).
    case none
}

/// How the realtime socket authenticates (`directus.auth.mode`), as Directus's `WEBSOCKETS_REST_AUTH` names it.
public enum AuthMode: String, Sendable, Equatable, CaseIterable {
    /// An `auth` message as the first message after connecting.
    case handshake
    /// The access token in the upgrade URL (`?access_token=`).
    case strict
    /// No authentication (public role).
    case `public`
}

/// Trust settings for https/wss connections (`directus.tls`).
public struct TLSConfig: Sendable, Equatable {
    /// An extra CA bundle (PEM) trusted besides the system store (`directus.tls.ca_file`); nil when empty.
    /// Default: nil (`""`).
    public var caFile: String?
    /// Skip certificate verification (`directus.tls.insecure_skip_verify`); accepted only as an explicit
    /// boolean `true` and logged as a warning. Default: false.
    public var insecureSkipVerify: Bool

    /// Creates TLS settings (verify against the system store by default).
    public init(caFile: String? = nil, insecureSkipVerify: Bool = false) {
        self.caFile = caFile
        self.insecureSkipVerify = insecureSkipVerify
    }
}

/// Exponential backoff with full jitter between connection attempts (`directus.reconnect`).
public struct ReconnectConfig: Sendable, Equatable {
    /// The first delay (`directus.reconnect.initial_delay`). Default: 500ms.
    public var initialDelay: Duration
    /// The longest delay (`directus.reconnect.max_delay`), at least `initialDelay`. Default: 30s.
    public var maxDelay: Duration
    /// A connection that lived this long resets the backoff (`directus.reconnect.reset_after`). Default: 60s.
    public var resetAfter: Duration

    /// Creates reconnect settings with the contract's defaults.
    public init(
        initialDelay: Duration = .milliseconds(500),
        maxDelay: Duration = .seconds(30),
        resetAfter: Duration = .seconds(60)
    ) {
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.resetAfter = resetAfter
    }
}
