// Compact serialisation (no whitespace), keys in order, strings escaped like `JSON.stringify`.
extension JSONValue {
    /// The compact JSON bytes of this value.
    public func serialized() -> [UInt8] {
        var bytes: [UInt8] = []
        serialize(into: &bytes)
        return bytes
    }

    /// The compact JSON text of this value.
    public func serializedString() -> String {
        String(decoding: serialized(), as: UTF8.self)
    }

    /// Appends the compact JSON bytes of this value to `bytes`.
    public func serialize(into bytes: inout [UInt8]) {
        switch self {
        case .null: JSONOutput.appendLiteral("null", to: &bytes)
        case .bool(true): JSONOutput.appendLiteral("true", to: &bytes)
        case .bool(false): JSONOutput.appendLiteral("false", to: &bytes)
        case .number(let number): bytes.append(contentsOf: number.text.utf8)
        case .string(let text): JSONOutput.appendQuoted(text, to: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                element.serialize(into: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            for (index, member) in object.members.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                JSONOutput.appendQuoted(member.key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                member.value.serialize(into: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }
}
