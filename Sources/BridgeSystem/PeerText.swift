/// Text that a peer or a C library produced (a broker's error text, a library's log line), made safe to put in a
/// log line or an error message: control characters become spaces and the length is bounded, so a hostile peer
/// can neither forge log lines nor grow them without bound.
package enum PeerText {
    /// At most this many UTF-8 bytes are kept, unless a caller asks otherwise.
    package static let defaultMaximumLength = 300

    /// `text` with control characters replaced by spaces, cut to `maximumLength` bytes on a character boundary
    /// (then ending in `…`).
    package static func sanitized(_ text: String, maximumLength: Int = defaultMaximumLength) -> String {
        var result = ""
        var length = 0
        for scalar in text.unicodeScalars {
            let clean: Unicode.Scalar = scalar.value < 0x20 || scalar.value == 0x7F ? " " : scalar
            length += String(clean).utf8.count
            if length > maximumLength {
                result += "…"
                break
            }
            result.unicodeScalars.append(clean)
        }
        return result
    }

    /// A C string, sanitized; "" for nil.
    package static func string(_ pointer: UnsafePointer<CChar>?, maximumLength: Int = defaultMaximumLength) -> String {
        guard let pointer else { return "" }
        return sanitized(String(cString: pointer), maximumLength: maximumLength)
    }
}
