import BridgeJSON

/// A small deterministic random generator (SplitMix64), so property tests print a seed that reproduces them.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E4B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

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
