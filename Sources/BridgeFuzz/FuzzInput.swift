/// Reads parameters off the front of a fuzz input, so one byte string can choose limits and read sizes as well
/// as carry the data. Every read succeeds: past the end it yields zeros, so any input is usable.
struct FuzzInput {
    private let bytes: UnsafeRawBufferPointer
    private(set) var offset = 0

    /// Starts reading `bytes` at the front.
    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// The next byte, or 0 at the end.
    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// The bytes not read yet.
    var rest: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[offset...])
    }
}

/// A small deterministic generator (SplitMix64): the choices a target makes from a seed byte repeat exactly
/// when the input is replayed.
struct SplitMix64 {
    private var state: UInt64

    /// A generator seeded with `seed`.
    init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// A number in `range`.
    mutating func next(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }
}
