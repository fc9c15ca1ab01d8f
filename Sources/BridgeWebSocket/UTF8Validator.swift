/// An incremental UTF-8 validator (RFC 3629): feed the bytes of a message in any number of pieces, fragment
/// boundaries included, and learn at the first bad byte that the message is invalid ("fail fast", as Autobahn
/// case 6.x expects). Rejects overlong forms, surrogates (U+D800–DFFF) and code points above U+10FFFF.
package struct UTF8Validator: Sendable {
    /// Continuation bytes still expected for the current code point.
    private var pending = 0
    /// The allowed range of the next continuation byte (narrower right after E0, ED, F0 and F4).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// Creates a validator at a code point boundary.
    package init() {}

    /// Whether everything fed so far ends on a code point boundary (check at the end of a message).
    package var isComplete: Bool { pending == 0 }

    /// Forgets any partial code point (start of a new message).
    package mutating func reset() {
        pending = 0
        lower = 0x80
        upper = 0xBF
    }

    /// Validates the next piece; `false` at the first byte that cannot be part of valid UTF-8.
    package mutating func validate(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        var index = 0
        while index < count {
            if pending == 0 {
                // ASCII fast path: eight bytes at a time while no byte has its high bit set.
                while index + 8 <= count {
                    let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                    if word & 0x8080_8080_8080_8080 != 0 { break }
                    index += 8
                }
                if index == count { return true }
                let byte = bytes[index]
                index += 1
                if byte < 0x80 { continue }
                switch byte {
                case 0xC2...0xDF: pending = 1
                case 0xE0:
                    pending = 2
                    lower = 0xA0  // no overlong 3-byte forms
                case 0xE1...0xEC, 0xEE...0xEF: pending = 2
                case 0xED:
                    pending = 2
                    upper = 0x9F  // no surrogates
                case 0xF0:
                    pending = 3
                    lower = 0x90  // no overlong 4-byte forms
                case 0xF1...0xF3: pending = 3
                case 0xF4:
                    pending = 3
                    upper = 0x8F  // nothing above U+10FFFF
                default: return false  // stray continuation byte, C0/C1 overlongs, F5–FF
                }
            } else {
                let byte = bytes[index]
                index += 1
                guard byte >= lower && byte <= upper else { return false }
                lower = 0x80
                upper = 0xBF
                pending -= 1
            }
        }
        return true
    }

    /// Whether `bytes` is complete, valid UTF-8.
    package static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var validator = UTF8Validator()
        return validator.validate(bytes) && validator.isComplete
    }

    /// Whether `bytes` is complete, valid UTF-8.
    package static func isValid(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { isValid($0) }
    }
}
