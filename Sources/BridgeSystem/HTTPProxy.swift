/// An HTTP proxy the operator chose (`directus.proxy`): a connection given one opens a tunnel through it with
/// `CONNECT host:port` and then speaks to the origin (TLS included) as it would directly. No proxy comes from the
/// environment (docs/configuration.md "Proxies").
///
/// `description` is the proxy as every URL is shown (`http://host:port`): never its user name or password.
public struct HTTPProxy: Sendable, Equatable, CustomStringConvertible {
    /// The proxy's host name or IP literal, without brackets.
    public var host: String
    /// The proxy's port.
    public var port: Int
    /// The user name for `Proxy-Authorization: Basic`; nil sends none.
    public var user: String?
    /// The password for `Proxy-Authorization: Basic`; nil is an empty one.
    public var password: String?

    /// Creates a proxy from its parts.
    public init(host: String, port: Int, user: String? = nil, password: String? = nil) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
    }

    /// Parses `http://[user[:password]@]host[:port]` (port 80 when none is written; user and password
    /// percent-decoded). Only `http://`: the tunnel is the proxy's, TLS runs inside it to the origin. Throws, without
    /// repeating the credentials, for another scheme, a path, query or fragment, or CR, LF or NUL in a decoded user
    /// name or password (they would end the `Proxy-Authorization` line).
    package init(parsing text: String) throws(ServiceURLError) {
        let url = try ServiceURL(text, defaultPorts: ["http": 80])
        let shown = ShownURL.of(text)
        guard url.path.isEmpty else {
            throw ServiceURLError(message: "invalid proxy URL \"\(shown)\": a proxy URL has no path")
        }
        if [url.user, url.password].contains(where: { $0.map(OneLine.isBroken) ?? false }) {
            throw ServiceURLError(
                message: "invalid proxy URL \"\(shown)\": the user name or password holds CR, LF or NUL")
        }
        self.init(host: url.host, port: url.port, user: url.user, password: url.password)
    }

    /// `http://host:port`, as the bridge shows URLs.
    public var description: String { ShownURL.of(scheme: "http", host: host, port: port) }

    /// `user:password` for a Basic `Proxy-Authorization` (before base64); nil without a user.
    public var basicCredentials: String? { user.map { $0 + ":" + (password ?? "") } }
}
