/// Replaces known secrets (tokens, passwords, webhook secrets) with `[REDACTED]` in text.
///
/// A last line of defence: code never logs secrets on purpose, but an error body or URL may echo one. It runs on raw
/// values, before anything escapes them for a log line or a JSON body: escaped, a secret with a quote, a backslash or
/// a control character no longer matches. Matching is by UTF-8 bytes, as the secret travels on the wire: Swift's
/// `String.contains` compares characters, and misses a secret that a following combining mark joins with.
///
/// Configured secrets stay for the life of the process. Secrets learned at run time rotate (every token refresh
/// brings a new access and refresh token): of each kind only the newest `generationsKept` are kept, so the list
/// — scanned for every log line — stays the same size however long the bridge runs.
public struct Redactor: Sendable {
    /// A kind of secret that is replaced at run time.
    public enum Rotating: Sendable, Hashable, CaseIterable {
        /// A Directus access token (renewed at 75 % of its lifetime).
        case accessToken
        /// A Directus refresh token (rotated by every refresh).
        case refreshToken
    }

    /// How many secrets of each rotating kind are hidden: the current one and the one before. The previous
    /// access token stays valid until it expires (the refresh comes at 75 % of its lifetime), and a late error
    /// answer may still echo it.
    public static let generationsKept = 2

    /// Every secret hidden now, longest first so that a secret containing another is hidden whole.
    public private(set) var secrets: [String] = []
    /// `secrets` as UTF-8, in the same order.
    private var patterns: [[UInt8]] = []
    private var permanent: [String] = []
    private var rotating: [Rotating: [String]] = [:]

    /// Creates a redactor for `secrets`; empty and very short values (under 4 characters) are ignored
    /// because hiding them would mangle ordinary words.
    public init(secrets: [String] = []) {
        for secret in secrets { add(secret) }
    }

    /// Adds a secret for the life of the redactor (configured secrets, a `check` run's tokens).
    public mutating func add(_ secret: String) {
        guard Self.isHideable(secret), !permanent.contains(secret) else { return }
        permanent.append(secret)
        rebuild()
    }

    /// Hides `secret`, the newest of its kind; the oldest of that kind beyond `generationsKept` is no longer
    /// hidden (it has expired or was revoked by the rotation).
    public mutating func rotate(_ secret: String, kind: Rotating) {
        guard Self.isHideable(secret) else { return }
        var kept = rotating[kind, default: []]
        guard kept.last != secret else { return }
        kept.removeAll { $0 == secret }
        kept.append(secret)
        rotating[kind] = Array(kept.suffix(Self.generationsKept))
        rebuild()
    }

    private static func isHideable(_ secret: String) -> Bool { secret.utf8.count >= 4 }

    private mutating func rebuild() {
        var all = permanent
        for kind in Rotating.allCases {
            for secret in rotating[kind, default: []] where !all.contains(secret) { all.append(secret) }
        }
        secrets = all.sorted { $0.utf8.count > $1.utf8.count }
        patterns = secrets.map { Array($0.utf8) }
    }

    /// `text` with every secret replaced.
    public func redact(_ text: String) -> String {
        guard !patterns.isEmpty else { return text }
        var bytes = Array(text.utf8)
        var changed = false
        for pattern in patterns {
            guard let replaced = Self.replacing(pattern, in: bytes) else { continue }
            bytes = replaced
            changed = true
        }
        // Whole secrets (valid UTF-8) were cut out of valid UTF-8: UTF-8 is self-synchronising, so a match starts and
        // ends on scalar boundaries and the result is valid UTF-8 again.
        return changed ? String(decoding: bytes, as: UTF8.self) : text
    }

    private static let marker = Array("[REDACTED]".utf8)

    /// `bytes` with every occurrence of `pattern` replaced by the marker, or nil when there is none.
    private static func replacing(_ pattern: [UInt8], in bytes: [UInt8]) -> [UInt8]? {
        guard let first = pattern.first, bytes.count >= pattern.count else { return nil }
        var output: [UInt8] = []
        var index = 0
        var copied = 0
        let last = bytes.count - pattern.count
        while index <= last {
            if bytes[index] == first, bytes[index..<(index + pattern.count)].elementsEqual(pattern) {
                output += bytes[copied..<index]
                output += marker
                index += pattern.count
                copied = index
            } else {
                index += 1
            }
        }
        guard copied > 0 else { return nil }
        output += bytes[copied...]
        return output
    }
}
