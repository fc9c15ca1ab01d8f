import BridgeSystem

extension BridgeConfig {
    /// Every secret the configuration holds, for the log redactor: the token, password and OTP, the proxy's
    /// password, and each sink's
    /// (`SinkSettings.secrets`: webhook signing secrets, credential-like header values, broker passwords). No
    /// duplicates, in file order.
    public var allSecrets: [String] {
        var secrets: [String] = []
        func add(_ secret: String?) {
            guard let secret, !secret.isEmpty, !secrets.contains(secret) else { return }
            secrets.append(secret)
        }
        switch directusSection?.auth.credentials ?? AuthCredentials.none {
        case .token(let token): add(token)
        case .login(_, let password, let otp):
            add(password)
            add(otp)
        case .none: break
        }
        add(directusSection?.proxy?.password)
        for sink in sinks {
            for secret in sink.settings.secrets { add(secret) }
        }
        for secret in state.servers.flatMap(URLCredentials.secrets(in:)) { add(secret) }
        return secrets
    }
}

extension HTTPHeader {
    private static let sensitiveNames: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "apikey",
    ]
    private static let sensitiveParts = [
        "auth", "token", "secret", "key", "password", "passwd", "cookie", "session",
        "signature", "credential",
    ]

    /// The value, and the value without an auth scheme (`Bearer abc` may also show up as just `abc`, a token
    /// echoed in an error body), when the header carries credentials; nothing otherwise.
    public var secretValues: [String] {
        guard isSensitive, !value.isEmpty else { return [] }
        guard let space = value.firstIndex(of: " ") else { return [value] }
        let bare = String(value[value.index(after: space)...].drop { $0 == " " })
        return bare.isEmpty ? [value] : [value, bare]
    }

    /// True for headers that carry credentials (`authorization`, `cookie`, `x-api-key`, or any name containing
    /// auth, token, secret, key, password, cookie, session, signature or credential): their values are redacted.
    public var isSensitive: Bool {
        let lowered = name.lowercased()
        return Self.sensitiveNames.contains(lowered) || Self.sensitiveParts.contains { lowered.contains($0) }
    }
}
