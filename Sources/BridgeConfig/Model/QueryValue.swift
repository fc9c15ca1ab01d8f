import BridgeSystem

/// A JSON value read from YAML (a subscription's `query`), kept in file order and sent to Directus as is.
///
/// Plain YAML scalars are typed per the YAML 1.2 core schema (`true`/`false`, `null`/`~`/empty, integers,
/// floats); quoted scalars are always strings. Numbers keep their text (normalised to JSON syntax), so
/// `12345678901234567890` survives unrounded.
public enum QueryValue: Sendable, Equatable {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number as JSON number text (`42`, `-1.5`, `1e3`).
    case number(String)
    /// A string.
    case string(String)
    /// An array in file order.
    case array([QueryValue])
    /// An object with its members in file order (keys are unique: the parser rejects duplicates).
    case object([(key: String, value: QueryValue)])

    /// Compares structurally; object members compare in order.
    public static func == (lhs: QueryValue, rhs: QueryValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    /// The member named `key` of an object, else nil.
    public subscript(key: String) -> QueryValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// Compact JSON (no spaces), object keys in file order, strings escaped per RFC 8259.
    public var jsonText: String {
        var bytes: [UInt8] = []
        appendJSON(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the compact JSON text to `bytes`.
    public func appendJSON(to bytes: inout [UInt8]) {
        switch self {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let value): bytes.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let text): bytes.append(contentsOf: text.utf8)
        case .string(let text): appendJSONString(text, to: &bytes)
        case .array(let items):
            bytes.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                item.appendJSON(to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                appendJSONString(member.key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                member.value.appendJSON(to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }
}
