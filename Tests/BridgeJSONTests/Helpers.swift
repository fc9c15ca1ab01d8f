import BridgeJSON

extension Array where Element == UInt8 {
    /// The UTF-8 bytes of `text`.
    init(utf8 text: String) { self = Array(text.utf8) }

    /// The bytes of `range` as text.
    func text(of range: JSONRange) -> String {
        String(decoding: self[range.offsets], as: UTF8.self)
    }
}

/// Whether all three entry points (validator, tree parser, message decoder as `data`) accept `bytes`.
/// Returns `nil` when they disagree, which is itself a failure.
func acceptance(_ bytes: [UInt8]) -> Bool? {
    let validated = JSONScanner.isValid(bytes)
    let parsed = (try? JSONValue.parse(bytes)) != nil
    let wrapped = Array(utf8: "{\"type\":\"t\",\"data\":") + bytes + Array(utf8: "}")
    let decoded = (try? DirectusServerMessage(decoding: wrapped)) != nil
    guard validated == parsed, parsed == decoded else { return nil }
    return validated
}
