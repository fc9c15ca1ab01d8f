public import BridgeSystem

/// A time-ordered UUID (RFC 9562 version 7): 48 bits of Unix milliseconds, then 12 bits of a per-millisecond
/// counter (`rand_a`), then 62 random bits. Live-mode event ids are `evt_` + its text.
public struct UUIDv7: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Bits 0–63: timestamp (48), version `0111` (4), `rand_a` (12).
    public let high: UInt64
    /// Bits 64–127: variant `10` (2), `rand_b` (62).
    public let low: UInt64

    /// A UUID from its two halves as they are (no version or variant checks).
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A version 7 UUID from its fields; out-of-range bits are masked off.
    public init(milliseconds: Int64, randA: UInt16, randB: UInt64) {
        let time = UInt64(clamping: max(milliseconds, 0)) & 0xFFFF_FFFF_FFFF
        high = time &<< 16 | 0x7000 | UInt64(randA & 0x0FFF)
        low = 0x8000_0000_0000_0000 | (randB & 0x3FFF_FFFF_FFFF_FFFF)
    }

    /// A UUID for `time` with random `rand_a` and `rand_b` (no ordering within one millisecond; use
    /// ``UUIDv7Generator`` for that).
    public static func random(at time: Timestamp = .now()) -> UUIDv7 {
        var generator = SystemRandomPool()
        return UUIDv7(
            milliseconds: time.unixMilliseconds,
            randA: UInt16(truncatingIfNeeded: generator.next()),
            randB: generator.next()
        )
    }

    /// The Unix milliseconds in the first 48 bits.
    public var milliseconds: Int64 { Int64(high &>> 16) }

    /// The version nibble (7 for UUIDs made here).
    public var version: Int { Int((high &>> 12) & 0xF) }

    /// Byte order is time order.
    public static func < (lhs: UUIDv7, rhs: UUIDv7) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }

    /// Lowercase canonical text, `xxxxxxxx-xxxx-7xxx-yxxx-xxxxxxxxxxxx`.
    public var description: String { text() }

    /// `prefix` followed by the lowercase canonical text, built in one allocation (`text(prefix: "evt_")`).
    public func text(prefix: String = "") -> String {
        var prefix = prefix
        return prefix.withUTF8 { prefixBytes in
            String(unsafeUninitializedCapacity: prefixBytes.count + 36) { output in
                _ = output.initialize(from: prefixBytes)
                write(into: UnsafeMutableBufferPointer(rebasing: output[prefixBytes.count...]))
                return prefixBytes.count + 36
            }
        }
    }

    /// Writes the 36 bytes of canonical text at the cursor (an event line's live id, without a `String` between).
    func write(to cursor: inout ByteCursor) {
        write(into: UnsafeMutableBufferPointer(start: cursor.pointer, count: 36))
        cursor.skip(36)
    }

    /// Writes the 36 bytes of canonical text to the start of `output`.
    func write(into output: UnsafeMutableBufferPointer<UInt8>) {
        let digits: StaticString = "0123456789abcdef"
        let hex = digits.utf8Start
        var position = 0
        func nibbles(_ value: UInt64, from shift: Int, count: Int) {
            var bit = shift
            for _ in 0..<count {
                bit -= 4
                output[position] = hex[Int((value &>> UInt64(bit)) & 0xF)]
                position += 1
            }
        }
        func dash() {
            output[position] = UInt8(ascii: "-")
            position += 1
        }
        nibbles(high, from: 64, count: 8)
        dash()
        nibbles(high, from: 32, count: 4)
        dash()
        nibbles(high, from: 16, count: 4)
        dash()
        nibbles(low, from: 64, count: 4)
        dash()
        nibbles(low, from: 48, count: 12)
    }

    /// Parses canonical text (either case); `nil` when it is not 8-4-4-4-12 hex digits.
    public init?(_ text: String) {
        let utf8 = Array(text.utf8)
        guard utf8.count == 36 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        var nibbles = 0
        for (offset, byte) in utf8.enumerated() {
            if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard let value = JSONScanner.hexValue(byte) else { return nil }
            if nibbles < 16 { high = high &<< 4 | UInt64(value) } else { low = low &<< 4 | UInt64(value) }
            nibbles += 1
        }
        self.init(high: high, low: low)
    }
}

/// Makes strictly increasing ``UUIDv7``s: within one millisecond the 12-bit `rand_a` counts up from a random
/// start below 2048 (RFC 9562 §6.2 method 1); if it runs out, or the clock steps back, the timestamp is carried
/// forward by one millisecond. The 62 random bits of `rand_b` are drawn with each new millisecond and shared by the
/// ids of that millisecond, which the counter tells apart: one draw per millisecond instead of one per id (at full
/// speed the kernel's generator, read for every id, was 4 % of the socket reader's CPU in perf record;
/// BENCHMARKS.md, "the live path per event — the id's random bits"). Another producer's ids of that millisecond have
/// 62 random bits of their own. One generator per producer (it is a value; keep it in the owning state).
public struct UUIDv7Generator: Sendable {
    private var lastMilliseconds: Int64 = -1
    private var counter: UInt16 = 0
    /// The `rand_b` of the ids of `lastMilliseconds`.
    private var randB: UInt64 = 0

    /// A generator that has not issued anything yet.
    public init() {}

    /// The next UUID for `time` (default: now), with random bits from the kernel's CSPRNG (the source of
    /// `SystemRandomNumberGenerator`, read in 4 KiB batches through a shared pool).
    public mutating func next(at time: Timestamp = .now()) -> UUIDv7 {
        var random = SystemRandomPool()
        return next(at: time, using: &random)
    }

    /// The next UUID for `time`, with random bits from `random` (tests pass a seeded generator).
    public mutating func next<Random: RandomNumberGenerator>(at time: Timestamp, using random: inout Random) -> UUIDv7 {
        let now = max(time.unixMilliseconds, 0)
        if now > lastMilliseconds {
            lastMilliseconds = now
            start(using: &random)
        } else if counter < 0x0FFF {
            counter += 1
        } else {
            lastMilliseconds += 1
            start(using: &random)
        }
        return UUIDv7(milliseconds: lastMilliseconds, randA: counter, randB: randB)
    }

    /// A new millisecond's random counter start and `rand_b`, from one random word each.
    private mutating func start<Random: RandomNumberGenerator>(using random: inout Random) {
        counter = UInt16(truncatingIfNeeded: random.next()) & 0x07FF
        randB = random.next()
    }
}
