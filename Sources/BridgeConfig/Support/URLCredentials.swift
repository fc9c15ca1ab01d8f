/// Credentials written into a server URL's user information (`nats://user:password@host:4222`, `nats://token@host`):
/// the one way `state.servers` can carry them, and allowed in a JetStream sink's `servers`. They must never reach a
/// log line, `status`, `check` or a configuration message: `secrets(in:)` feeds the log redactor; a URL is shown as
/// `ShownURL` shows it, without its user information; `redacted(_:)` is the URL in the effective configuration
/// (`print-config`), where the rest of it matters.
package enum URLCredentials {
    /// The secret parts of `url`'s user information: the password (after the first `:`), or the whole user
    /// information when it has no `:` (a token). Empty when the URL has none.
    package static func secrets(in url: String) -> [String] {
        guard let (_, userInfo, _) = split(url) else { return [] }
        guard let colon = userInfo.firstIndex(of: ":") else { return [String(userInfo)] }
        let password = userInfo[userInfo.index(after: colon)...]
        return password.isEmpty ? [] : [String(password)]
    }

    /// `url` with the secret part of its user information replaced (`nats://user:[REDACTED]@host`,
    /// `nats://[REDACTED]@host`).
    package static func redacted(_ url: String) -> String {
        guard let (scheme, userInfo, rest) = split(url) else { return url }
        let user = userInfo.firstIndex(of: ":").map { String(userInfo[..<$0]) + ":" } ?? ""
        return String(scheme) + user + marker + "@" + String(rest)
    }

    private static let marker = "[REDACTED]"

    /// `scheme://`, the user information before the authority's last `@`, and what follows it; nil without any.
    private static func split(_ url: String) -> (Substring, Substring, Substring)? {
        guard let schemeEnd = url.firstRange(of: "://") else { return nil }
        let afterScheme = url[schemeEnd.upperBound...]
        let authorityEnd = afterScheme.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? afterScheme.endIndex
        guard let at = afterScheme[..<authorityEnd].lastIndex(of: "@") else { return nil }
        return (url[..<schemeEnd.upperBound], afterScheme[..<at], afterScheme[afterScheme.index(after: at)...])
    }
}
