/// Types plain scalars the way the YAML 1.2 core schema does; quoted and block scalars are always strings.
///
/// libyaml only tokenises, so the typing (and the normalisation to JSON number text) is ours.
package enum YAMLCoreSchema {
    /// The type a scalar resolves to.
    package enum Resolved: Sendable, Equatable {
        /// `null`, `~` or empty.
        case null
        /// `true`/`false` in any of the core schema's spellings.
        case bool(Bool)
        /// An integer as JSON number text (decimal, no leading `+` or zeros).
        case integer(String)
        /// A float as JSON number text, or nil for `.inf`/`.nan`, which JSON cannot carry.
        case float(String?)
        /// Anything else, and every quoted or block scalar.
        case string(String)
    }

    private static let stringTags: Set<String> = ["tag:yaml.org,2002:str", "!"]

    /// Resolves `scalar` (its text as interpolated) per the core schema.
    package static func resolve(_ scalar: YAMLScalar) -> Resolved {
        if let tag = scalar.tag, stringTags.contains(tag) { return .string(scalar.text) }
        guard scalar.style == .plain else { return .string(scalar.text) }
        let text = scalar.text
        switch text {
        case "", "~", "null", "Null", "NULL": return .null
        case "true", "True", "TRUE": return .bool(true)
        case "false", "False", "FALSE": return .bool(false)
        case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN":
            return .float(nil)
        default: break
        }
        if let integer = integerText(text) { return .integer(integer) }
        if let float = floatText(text) { return .float(float) }
        return .string(text)
    }

    /// `[-+]?[0-9]+`, `0o[0-7]+` or `0x[0-9a-fA-F]+` as decimal text; nil otherwise (or on UInt64 overflow
    /// of the octal/hex forms, which then stay strings).
    private static func integerText(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        if bytes.count > 2, bytes[0] == UInt8(ascii: "0") {
            if bytes[1] == UInt8(ascii: "x") {
                return UInt64(String(decoding: bytes[2...], as: UTF8.self), radix: 16).map { String($0) }
            }
            if bytes[1] == UInt8(ascii: "o") {
                return UInt64(String(decoding: bytes[2...], as: UTF8.self), radix: 8).map { String($0) }
            }
        }
        var digits = bytes[...]
        var negative = false
        if let first = digits.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.allSatisfy(isDigit) else { return nil }
        return (negative ? "-" : "") + stripLeadingZeros(digits)
    }

    /// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?` as JSON number text.
    private static func floatText(_ text: String) -> String? {
        var rest = Array(text.utf8)[...]
        var output = ""
        if let first = rest.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            if first == UInt8(ascii: "-") { output = "-" }
            rest = rest.dropFirst()
        }
        let integerPart = rest.prefix(while: isDigit)
        rest = rest.dropFirst(integerPart.count)
        var fraction: ArraySlice<UInt8>? = nil
        if rest.first == UInt8(ascii: ".") {
            rest = rest.dropFirst()
            let digits = rest.prefix(while: isDigit)
            rest = rest.dropFirst(digits.count)
            fraction = digits
        }
        guard !integerPart.isEmpty || !(fraction ?? []).isEmpty else { return nil }
        output += integerPart.isEmpty ? "0" : stripLeadingZeros(integerPart)
        if let fraction { output += "." + (fraction.isEmpty ? "0" : String(decoding: fraction, as: UTF8.self)) }
        if let marker = rest.first, marker == UInt8(ascii: "e") || marker == UInt8(ascii: "E") {
            rest = rest.dropFirst()
            var exponent = "e"
            if let sign = rest.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
                exponent.append(Character(Unicode.Scalar(sign)))
                rest = rest.dropFirst()
            }
            let digits = rest.prefix(while: isDigit)
            guard !digits.isEmpty else { return nil }
            rest = rest.dropFirst(digits.count)
            output += exponent + String(decoding: digits, as: UTF8.self)
        }
        return rest.isEmpty ? output : nil
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private static func stripLeadingZeros(_ digits: ArraySlice<UInt8>) -> String {
        let trimmed = digits.drop { $0 == UInt8(ascii: "0") }
        return trimmed.isEmpty ? "0" : String(decoding: trimmed, as: UTF8.self)
    }
}
