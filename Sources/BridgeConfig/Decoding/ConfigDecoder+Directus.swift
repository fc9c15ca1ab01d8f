package import BridgeSystem

extension ConfigDecoder {
    /// `directus`, or nil when its required `url` is missing or invalid (reported).
    package mutating func decodeDirectus(_ root: MappingView) -> DirectusConfig? {
        guard requirePresent(root, "directus") else { return nil }
        let map = section(root, "directus", keys: ConfigKeys.directus)
        let url = requiredString(map, "url").flatMap { decodeURL($0, field: map.field("url"), at: map["url"]?.mark) }
        if let url, url.query != nil, let node = map["url"] {
            report("directus.url must not have a ?query (it is the base URL of the API)", at: node.mark)
        }
        let websocketPath = decodeWebsocketPath(map)
        let auth = decodeAuth(section(map, "auth", keys: ConfigKeys.auth))
        let tls = decodeTLS(section(map, "tls", keys: ConfigKeys.tls))
        let connectTimeout = duration(map, "connect_timeout", default: DirectusConfig.defaultConnectTimeout)
        let requestTimeout = duration(map, "request_timeout", default: DirectusConfig.defaultRequestTimeout)
        let heartbeat = duration(map, "heartbeat", default: DirectusConfig.defaultHeartbeat, atLeast: .milliseconds(100))
        let reconnect = decodeReconnect(section(map, "reconnect", keys: ConfigKeys.reconnect))
        let proxy = proxy(map)
        guard let url else { return nil }
        return DirectusConfig(
            url: url,
            websocketPath: websocketPath,
            auth: auth,
            tls: tls,
            connectTimeout: connectTimeout,
            requestTimeout: requestTimeout,
            heartbeat: heartbeat,
            reconnect: reconnect,
            proxy: proxy
        )
    }

    /// A `proxy` key (`directus.proxy`, a webhook sink's): `http://[user:password@]host:port`, or nil (none,
    /// whatever the environment says).
    package mutating func proxy(_ map: MappingView) -> HTTPProxy? {
        guard let text = string(map, "proxy"), let node = map["proxy"] else { return nil }
        do {
            return try HTTPProxy(parsing: text)
        } catch {
            report("\(map.field("proxy")): \(error.message)", at: node.mark)
            return nil
        }
    }

    /// Parses an http(s) URL, reporting at `mark` why it is not one. The message names the URL as URLs are shown
    /// (`scheme://host:port`: its path or query may be a token), and text that is no URL at all not at all.
    package mutating func decodeURL(_ text: String, field: String, at mark: SourceMark?) -> HTTPURL? {
        switch HTTPURL.parse(text) {
        case .success(let url): return url
        case .failure(let problem):
            let got = text.contains("://") ? ", got \"\(ShownURL.of(text))\"" : ""
            report("\(field) \(problem.reason)\(got)", at: mark ?? .start)
            return nil
        }
    }

    private mutating func decodeWebsocketPath(_ map: MappingView) -> String {
        let fallback = DirectusConfig.defaultWebsocketPath
        guard let path = string(map, "websocket_path"), let node = map["websocket_path"] else { return fallback }
        guard path.hasPrefix("/") else {
            report("directus.websocket_path must start with \"/\", got \"\(path)\"", at: node.mark)
            return fallback
        }
        if path.contains(where: { $0 == "?" || $0 == "#" || $0.isWhitespace }) {
            report("directus.websocket_path must be a plain path (no spaces, ? or #), got \"\(path)\"", at: node.mark)
            return fallback
        }
        return path
    }

    private mutating func decodeAuth(_ map: MappingView) -> AuthConfig {
        let issuesBefore = issues.count
        let token = secret(map, "token", orFile: "token_file")
        let email = credential(map, "email")
        let password = secret(map, "password", orFile: "password_file")
        let credentialIssuesReported = issues.count > issuesBefore
        let otp = credential(map, "otp")
        let mode = choice(map, "mode", default: AuthMode.handshake)
        let tokenMark = map.keyMark("token") ?? map.keyMark("token_file") ?? map.mark
        let passwordMark = map.keyMark("password") ?? map.keyMark("password_file") ?? map.mark

        var credentials = AuthCredentials.none
        if let token {
            credentials = .token(token)
            if email != nil || password != nil {
                report("directus.auth: set either a token or email + password, not both", at: tokenMark)
            }
        } else if let email, let password {
            credentials = .login(email: email, password: password, otp: otp)
        } else if email != nil {
            report("directus.auth: \"email\" needs \"password\" (or \"password_file\")", at: map.keyMark("email")!)
        } else if password != nil {
            report("directus.auth: \"password\" needs \"email\"", at: passwordMark)
        }
        if otp != nil, email == nil || password == nil || token != nil {
            report("directus.auth.otp is only used with email + password", at: map.keyMark("otp")!)
        }

        let hasCredentials = token != nil || email != nil || password != nil
        // A credential whose value already failed (undefined variable, unreadable file) must not also be
        // reported as missing: that would send the reader after the wrong problem.
        let credentialFailed = credentialIssuesReported || hasAlreadyReportedValue(map, Self.credentialKeys)
        let modeMark = map["mode"]?.mark ?? map.mark
        switch mode {
        case .public where hasCredentials:
            report(
                "directus.auth.mode: \"public\" means no credentials; remove the token/email/password or use "
                    + "mode \"handshake\" or \"strict\"",
                at: modeMark
            )
        case .handshake, .strict:
            if !hasCredentials, !credentialFailed, map.isMapping {
                report(
                    "directus.auth: mode \"\(mode.rawValue)\" needs credentials: set token (or token_file), or "
                        + "email and password; for public access set \"mode: public\"",
                    at: modeMark
                )
            }
        case .public:
            break
        }
        return AuthConfig(credentials: credentials, mode: mode)
    }

    private static let credentialKeys = ["token", "token_file", "email", "password", "password_file"]

    /// True when one of `keys` holds a value whose interpolation already failed (and was reported).
    package func hasAlreadyReportedValue(_ map: MappingView, _ keys: [String]) -> Bool {
        map.entries.contains { keys.contains($0.key) && $0.value.scalar?.alreadyReported == true }
    }

    private mutating func decodeTLS(_ map: MappingView) -> TLSConfig {
        var caFile = string(map, "ca_file")
        if let path = caFile, let node = map["ca_file"],
            !checkLibraryFile(
                path, field: "directus.tls.ca_file", at: node.mark, pem: "certificate",
                marker: "-----BEGIN CERTIFICATE-----")
        {
            caFile = nil
        }
        let insecure = bool(map, "insecure_skip_verify", default: false)
        return TLSConfig(caFile: caFile, insecureSkipVerify: insecure)
    }

    private mutating func decodeReconnect(_ map: MappingView) -> ReconnectConfig {
        let defaults = ReconnectConfig()
        let initial = duration(map, "initial_delay", default: defaults.initialDelay)
        let maximum = duration(map, "max_delay", default: defaults.maxDelay)
        let resetAfter = duration(map, "reset_after", default: defaults.resetAfter)
        if maximum < initial {
            report(
                "directus.reconnect.max_delay (\(DurationText.format(maximum))) must not be shorter than "
                    + "initial_delay (\(DurationText.format(initial)))",
                at: map["max_delay"]?.mark ?? map["initial_delay"]?.mark ?? map.mark
            )
        }
        return ReconnectConfig(initialDelay: initial, maxDelay: maximum, resetAfter: resetAfter)
    }
}
