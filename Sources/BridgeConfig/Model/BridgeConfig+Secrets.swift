extension BridgeConfig {
    /// Every secret the configuration holds, for the log redactor: the token, password and OTP, webhook signing
    /// secrets (also without their `whsec_` prefix) and the values of credential-like webhook headers (also
    /// without an auth scheme such as `Bearer `). No duplicates, in file order.
    public var allSecrets: [String] {
        var secrets: [String] = []
        func add(_ secret: String?) {
            guard let secret, !secret.isEmpty, !secrets.contains(secret) else { return }
            secrets.append(secret)
        }
        switch directus.auth.credentials {
        case .token(let token): add(token)
        case .login(_, let password, let otp):
            add(password)
            add(otp)
        case .none: break
        }
        for sink in sinks {
            guard case .webhook(let webhook) = sink else { continue }
            for secret in webhook.secrets {
                add(secret)
                if secret.hasPrefix("whsec_") { add(String(secret.dropFirst(6))) }
            }
            for header in webhook.headers where header.isSensitive {
                add(header.value)
                // "Bearer abc" may also show up as just "abc" (a token echoed in an error body).
                if let space = header.value.firstIndex(of: " ") {
                    add(String(header.value[header.value.index(after: space)...]).trimmingLeadingSpaces())
                }
            }
        }
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

    /// True for headers that carry credentials (`authorization`, `cookie`, `x-api-key`, or any name containing
    /// auth, token, secret, key, password, cookie, session, signature or credential): their values are redacted.
    public var isSensitive: Bool {
        let lowered = name.lowercased()
        return Self.sensitiveNames.contains(lowered) || Self.sensitiveParts.contains { lowered.contains($0) }
    }
}

extension String {
    fileprivate func trimmingLeadingSpaces() -> String {
        String(drop { $0 == " " })
    }
}
