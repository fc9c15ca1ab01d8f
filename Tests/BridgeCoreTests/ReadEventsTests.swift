import BridgeJSON
import Testing

@testable import BridgeDirectus
@testable import BridgeEvents

/// `ReadEvents.sealLines`: a socket read's lines become their events' bodies in one buffer that holds exactly them,
/// with at most half as much again unused, whether the scratch buffer is handed on or copied.
@Suite struct ReadEventsTests {
    /// Writes `count` lines of `length` bytes (newline included) into `read` as the reader does, one event each.
    private func write(_ count: Int, linesOf length: Int, into read: inout ReadEvents, from first: Int) {
        for index in first..<(first + count) {
            let digits = Array(String(index).utf8)
            read.lines += digits + [UInt8](repeating: UInt8(ascii: "x"), count: length - digits.count - 1) + [0x0A]
            read.lineEnds.append(read.lines.count - 1)
            read.events.append(makeEvent(index))
        }
    }

    @Test func aReadsLinesAreSealedIntoOneBufferOfExactlyThemAndLittleMore() throws {
        var read = ReadEvents(events: [], ids: UUIDv7Generator(), lines: [], lineEnds: [])
        // Alike reads (the scratch handed on), a much smaller one (copied), growing and shrinking ones.
        let reads = [(40, 300), (40, 300), (38, 310), (1, 300), (1, 300), (200, 500), (3, 80), (190, 500), (0, 0)]
        var first = 0
        for (count, length) in reads {
            let before = read.events.count
            write(count, linesOf: length, into: &read, from: first)
            let expected = read.lines
            read.sealLines()
            #expect(read.lines.isEmpty && read.lineEnds.isEmpty, "the scratch buffers are emptied")
            let events = Array(read.events[before...])
            #expect(events.count == count)
            guard let buffer = events.first?.body.buffer else { continue }
            #expect(buffer == expected, "\(count) lines of \(length)")
            #expect(buffer.capacity - buffer.count <= buffer.count / 2, "\(buffer.capacity) for \(buffer.count)")
            let lent = events.withUnsafeBufferPointer { EventBody.withLines(of: $0) { Array($0) } }
            #expect(lent == expected, "one buffer, the lines in order")
            for (offset, event) in events.enumerated() {
                #expect(event.body.count == length - 1)
                #expect(event.body.starts(with: Array(String(first + offset).utf8)))
            }
            first += count
        }
    }
}
