import BridgeSystem
import Foundation
import Testing

/// Issue 23, item 4: secrets are hidden in the raw values of a line, before the line is escaped, so that a secret
/// with a quote, a backslash, a control character or a non-ASCII letter is hidden too.
@Suite struct LogRedactionTests {
    /// Secrets a config may hold (a YAML single-quoted `'tok"en\1234'` is taken literally) and a proxy may echo.
    static let secrets = [#"tok"en\1234"#, "tab\tsecret", "esc\u{1B}[31msecret", "pässwört-ñ", "ünï\u{1}côdé"]

    /// What `handler` writes for one line carrying every secret in its message and in a field.
    private func written(format: LogFormat) throws -> String {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let handler = StderrLogHandler(level: .info, format: format, secrets: Self.secrets, fd: ends[1], colour: false)
        for secret in Self.secrets {
            handler.log(
                level: .error, message: "proxy answered 503: \(secret)",
                metadata: ["error": "HTTP 503: bad token \(secret) refused", "plain": .string(secret)], label: "http")
        }
        close(ends[1])
        let output = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true).readDataToEndOfFile()
        return String(decoding: output, as: UTF8.self)
    }

    /// Each secret's raw bytes and its escaped forms (JSON and the text format's quoting use the same escapes).
    private func forms(of secret: String) -> [String] {
        var escaped: [UInt8] = []
        appendJSONString(secret, to: &escaped)
        return [secret, String(decoding: escaped.dropFirst().dropLast(), as: UTF8.self)]
    }

    @Test(arguments: [LogFormat.text, .json])
    func secretsWithQuotesBackslashesControlsAndNonASCIIAreHidden(format: LogFormat) throws {
        let output = try written(format: format)
        #expect(output.split(separator: "\n").count == Self.secrets.count, "\(output)")
        for secret in Self.secrets {
            for form in forms(of: secret) { #expect(!output.contains(form), "\(form) in \(output)") }
        }
        // Every occurrence was replaced: three per line (message, error, plain).
        #expect(output.components(separatedBy: "[REDACTED]").count - 1 == 3 * Self.secrets.count, "\(output)")
    }

    /// Swift's `String.contains` compares characters (grapheme clusters): a secret followed by a combining mark,
    /// or ending in a letter the text joins with the next one, is not "contained". Secrets are bytes on the wire.
    @Test func aSecretIsFoundByItsBytesWhateverFollowsIt() {
        let redactor = Redactor(secrets: ["abcd1234", "naïve-π"])
        #expect(redactor.redact("x abcd1234\u{301} y") == "x [REDACTED]\u{301} y")
        #expect(redactor.redact("naïve-π\u{308}naïve-π") == "[REDACTED]\u{308}[REDACTED]")
    }

    /// A peer's text is redacted before it is cut and cleaned: cutting first could keep a secret's first half,
    /// cleaning first turns its control characters into spaces so that it no longer matches.
    @Test func peerTextIsRedactedBeforeItIsCutOrCleaned() {
        let redactor = Redactor(secrets: ["esc\u{1B}secret-value"])
        let cleaned = PeerText.sanitized("bad: esc\u{1B}secret-value", redacting: redactor)
        #expect(cleaned == "bad: [REDACTED]")
        let cut = PeerText.sanitized(
            String(repeating: "x", count: 290) + "esc\u{1B}secret-value", redacting: redactor, maximumLength: 300)
        #expect(!cut.contains("esc") && !cut.contains("secret"), "\(cut)")
    }
}
