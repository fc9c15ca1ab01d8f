/// Replaces known secrets (tokens, passwords, webhook secrets) with `[REDACTED]` in text.
///
/// A last line of defence: code never logs secrets on purpose, but an error body or URL may echo one.
public struct Redactor: Sendable {
    /// The secrets to hide, longest first so that a secret containing another is hidden whole.
    public private(set) var secrets: [String]

    /// Creates a redactor for `secrets`; empty and very short values (under 4 characters) are ignored
    /// because hiding them would mangle ordinary words.
    public init(secrets: [String] = []) {
        self.secrets = []
        for secret in secrets { add(secret) }
    }

    /// Adds a secret learned at run time (a refreshed access token, a rotated refresh token).
    public mutating func add(_ secret: String) {
        guard secret.utf8.count >= 4, !secrets.contains(secret) else { return }
        secrets.append(secret)
        secrets.sort { $0.utf8.count > $1.utf8.count }
    }

    /// `text` with every secret replaced.
    public func redact(_ text: String) -> String {
        guard !secrets.isEmpty else { return text }
        var result = text
        for secret in secrets where result.contains(secret) {
            result = result.replacingAll(secret, with: "[REDACTED]")
        }
        return result
    }
}

extension String {
    /// Replaces every occurrence of `target` without Foundation.
    fileprivate func replacingAll(_ target: String, with replacement: String) -> String {
        var output = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: target) {
            output += rest[rest.startIndex..<range.lowerBound]
            output += replacement
            rest = rest[range.upperBound...]
        }
        output += rest
        return output
    }
}
