/// Text that a peer or a C library produced (a broker's error text, a library's log line, Directus's error message),
/// made safe to put in a log line, `check`'s or `dlq`'s output, or an error message: control characters (C0, DEL,
/// C1 — the 8-bit escape `CSI` is one) and the Unicode line and paragraph separators become spaces, and the length
/// is bounded, so a hostile peer can neither forge lines nor grow them without bound.
///
/// Redact before sanitizing (`sanitized(_:redacting:maximumLength:)`): cleaned, a secret with a control character no
/// longer matches; cut, a secret at the cut would keep its first half.
package enum PeerText {
    /// At most this many UTF-8 bytes are kept, unless a caller asks otherwise.
    package static let defaultMaximumLength = 300

    /// `text` with control characters replaced by spaces, cut to `maximumLength` bytes on a character boundary
    /// (then ending in `…`).
    package static func sanitized(_ text: String, maximumLength: Int = defaultMaximumLength) -> String {
        if text.utf8.count <= maximumLength, !text.utf8.contains(where: mayStartUnsafeScalar) { return text }
        var result = ""
        var length = 0
        for scalar in text.unicodeScalars {
            let clean: Unicode.Scalar = isUnsafe(scalar) ? " " : scalar
            length += clean.utf8.count
            if length > maximumLength {
                result += "…"
                break
            }
            result.unicodeScalars.append(clean)
        }
        return result
    }

    /// `text` with `redactor`'s secrets hidden, then sanitized.
    package static func sanitized(
        _ text: String, redacting redactor: Redactor, maximumLength: Int = defaultMaximumLength
    ) -> String {
        sanitized(redactor.redact(text), maximumLength: maximumLength)
    }

    /// At most `maximumLength` bytes of `text`, cut on a scalar boundary (then ending in `…`) and otherwise as it
    /// came: what an error keeps of a peer's text, so that it never holds megabytes, while the places that show it
    /// can still redact the raw text before they sanitize it.
    package static func prefix(_ text: String, maximumLength: Int) -> String {
        guard text.utf8.count > maximumLength else { return text }
        let utf8 = text.utf8
        var end = utf8.index(utf8.startIndex, offsetBy: max(0, maximumLength))
        while end > utf8.startIndex, utf8[end] & 0xC0 == 0x80 { end = utf8.index(before: end) }  // a scalar's start
        return String(decoding: utf8[..<end], as: UTF8.self) + "…"
    }

    /// A C string, sanitized; "" for nil.
    package static func string(_ pointer: UnsafePointer<CChar>?, maximumLength: Int = defaultMaximumLength) -> String {
        guard let pointer else { return "" }
        return sanitized(String(cString: pointer), maximumLength: maximumLength)
    }

    /// A C string with `redactor`'s secrets hidden, then sanitized; "" for nil.
    package static func string(
        _ pointer: UnsafePointer<CChar>?, redacting redactor: Redactor, maximumLength: Int = defaultMaximumLength
    ) -> String {
        guard let pointer else { return "" }
        return sanitized(String(cString: pointer), redacting: redactor, maximumLength: maximumLength)
    }

    /// Whether `scalar` must not reach a line as it is: a control character (C0, DEL, C1), or U+2028/U+2029, which
    /// some log viewers break lines at.
    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    /// Whether a UTF-8 byte may begin an unsafe scalar: a C0 control, DEL, the lead byte of C1 controls (0xC2) or of
    /// U+2028/U+2029 (0xE2).
    private static func mayStartUnsafeScalar(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == 0x7F || byte == 0xC2 || byte == 0xE2
    }
}
