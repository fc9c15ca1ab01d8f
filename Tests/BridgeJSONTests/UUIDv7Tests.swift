import BridgeJSON
import BridgeSystem
import BridgeTestSupport
import Testing

@Suite struct UUIDv7Tests {
    @Test func layoutAndText() throws {
        let uuid = UUIDv7(milliseconds: 0x0190_A1B2_C3D4, randA: 0x0E5F, randB: 0x0A9B_0C1D_2E3F_4A5B)
        #expect(uuid.description == "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b")
        #expect(uuid.version == 7)
        #expect(uuid.milliseconds == 0x0190_A1B2_C3D4)
        #expect(UUIDv7(uuid.description) == uuid)
        #expect(UUIDv7("0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B") == uuid)
        #expect(UUIDv7("0190a1b2c3d47e5f8a9b0c1d2e3f4a5b") == nil)
        #expect(UUIDv7("0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5g") == nil)
    }

    @Test func randomHasVersionVariantAndTime() {
        let time = Timestamp(rfc3339: "2026-12-02T10:15:00.123Z")!
        let uuid = UUIDv7.random(at: time)
        #expect(uuid.version == 7)
        #expect(uuid.low >> 62 == 0b10)
        #expect(uuid.milliseconds == time.unixMilliseconds)
        let text = uuid.description
        #expect(text.count == 36)
        #expect(text == text.lowercased())
        #expect(UUIDv7.random(at: time) != uuid)
    }

    @Test func generatorIsStrictlyIncreasingWithinAMillisecondAndAcrossClockSteps() {
        var generator = UUIDv7Generator()
        var random = SplitMix64(seed: 7)
        let base = Timestamp(rfc3339: "2026-12-02T10:15:00.123Z")!
        var previous = generator.next(at: base, using: &random)
        var times: [Timestamp] = Array(repeating: base, count: 10_000)  // many in one millisecond: counter overflows
        times += [Timestamp(microsecondsSinceEpoch: base.microsecondsSinceEpoch - 5_000_000)]  // clock steps back
        times += (0..<100).map { Timestamp(microsecondsSinceEpoch: base.microsecondsSinceEpoch + Int64($0) * 700) }
        for time in times {
            let next = generator.next(at: time, using: &random)
            #expect(previous < next)
            #expect(previous.description < next.description)  // text order is time order too
            #expect(next.version == 7 && next.low >> 62 == 0b10)
            previous = next
        }
    }

    /// The kernel's generator is read once per millisecond, not once per id (BENCHMARKS.md, "the id's random
    /// bits"): the ids of one millisecond share `rand_b` and differ in the counter; the next millisecond, and a
    /// counter that ran out, draw new bits.
    @Test func randomBitsAreDrawnOncePerMillisecondAndSharedByItsIDs() {
        var generator = UUIDv7Generator()
        var random = CountingRandom()
        let base = Timestamp(rfc3339: "2026-12-02T10:15:00.123Z")!
        let first = (0..<100).map { _ in generator.next(at: base, using: &random) }
        #expect(random.draws == 2)
        #expect(Set(first.map(\.low)).count == 1)
        #expect(Set(first.map(\.high)).count == 100)
        let nextMillisecond = Timestamp(microsecondsSinceEpoch: base.microsecondsSinceEpoch + 1_000)
        let later = generator.next(at: nextMillisecond, using: &random)
        #expect(random.draws == 4)
        #expect(later.low != first[0].low && later > first[99])
        // 4,096 counter values per millisecond at most: one carry of the time in 4,096 ids (the counter starts below
        // 2,048), with new bits.
        let burst = (0..<4_096).map { _ in generator.next(at: nextMillisecond, using: &random) }
        #expect(random.draws == 6)
        #expect(Set(burst.map(\.low)).count == 2)
        #expect(zip([later] + burst, burst).allSatisfy { $0 < $1 })
    }

    @Test func systemRandomGeneratorGivesDistinctIDs() {
        var generator = UUIDv7Generator()
        var seen = Set<UUIDv7>()
        for _ in 0..<1_000 { seen.insert(generator.next()) }
        #expect(seen.count == 1_000)
    }
}

/// A seeded generator that counts the words drawn from it.
private struct CountingRandom: RandomNumberGenerator {
    private var source = SplitMix64(seed: 11)
    private(set) var draws = 0

    mutating func next() -> UInt64 {
        draws += 1
        return source.next()
    }
}
