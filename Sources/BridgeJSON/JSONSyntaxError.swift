/// Why a byte sequence is not valid JSON (RFC 8259), and where the scanner noticed.
///
/// Retrying cannot help: the same bytes give the same error. A peer that keeps sending them is broken or hostile.
public struct JSONSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong.
    public enum Reason: Sendable, Hashable {
        /// The input ended inside a value (or was empty).
        case unexpectedEnd
        /// A byte that cannot start or continue the value at this position.
        case unexpectedByte(UInt8)
        /// A number that breaks the grammar: leading zero, missing digits, a lone `-`.
        case invalidNumber
        /// `true`, `false` or `null` misspelled.
        case invalidLiteral
        /// A backslash followed by something other than `" \ / b f n r t u`.
        case invalidEscape
        /// `\u` not followed by four hex digits.
        case invalidUnicodeEscape
        /// A `\uD800`–`\uDFFF` escape that is not a high surrogate followed by a low surrogate.
        case unpairedSurrogate
        /// A raw byte below 0x20 inside a string (it must be escaped).
        case controlCharacterInString
        /// A string holds bytes that are not well-formed UTF-8.
        case invalidUTF8
        /// Objects and arrays nested deeper than the scanner's limit.
        case nestingTooDeep
        /// Something other than whitespace after the top-level value.
        case trailingContent
    }

    /// What was wrong.
    public var reason: Reason
    /// Byte offset into the scanned buffer where the problem was found.
    public var offset: Int

    /// Creates an error for `reason` at byte `offset`.
    public init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    /// Never retriable: the input itself is wrong.
    public var isRetriable: Bool { false }

    /// A one-line explanation naming the reason and offset.
    public var description: String {
        let what: String
        switch reason {
        case .unexpectedEnd: what = "unexpected end of input"
        case .unexpectedByte(let byte):
            let printable = byte >= 0x20 && byte < 0x7F ? " '\(Character(Unicode.Scalar(byte)))'" : ""
            what = "unexpected byte 0x\(String(byte, radix: 16))\(printable)"
        case .invalidNumber: what = "invalid number"
        case .invalidLiteral: what = "invalid literal"
        case .invalidEscape: what = "invalid escape sequence"
        case .invalidUnicodeEscape: what = "invalid \\u escape"
        case .unpairedSurrogate: what = "unpaired UTF-16 surrogate escape"
        case .controlCharacterInString: what = "unescaped control character in string"
        case .invalidUTF8: what = "invalid UTF-8 in string"
        case .nestingTooDeep: what = "objects/arrays nested too deeply"
        case .trailingContent: what = "content after the JSON value"
        }
        return "invalid JSON: \(what) at byte \(offset)"
    }
}
