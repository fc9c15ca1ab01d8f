import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeEvents
@testable import BridgeSinks

/// `EventBody`: a socket read's lines share one buffer, each event's body is its range, and the NDJSON sink writes
/// such lines as they lie, and any other events as before.
@Suite struct EventBodyTests {
    /// Events whose bodies are `lines`, laid out as the socket reader lays out one read: one buffer, each line
    /// followed by a newline.
    private func oneRead(_ lines: [String]) -> [EncodedEvent] {
        let buffer = Array(lines.map { $0 + "\n" }.joined().utf8)
        var start = 0
        return lines.enumerated().map { index, line in
            var event = makeEvent(index)
            event.body = EventBody(buffer, range: start..<(start + line.utf8.count))
            start += line.utf8.count + 1
            return event
        }
    }

    private func lent(_ events: [EncodedEvent]) -> [UInt8]? {
        events.withUnsafeBufferPointer { EventBody.withLines(of: $0) { Array($0) } }
    }

    @Test func theLinesOfOneReadAreLentAsTheyLie() throws {
        let events = oneRead([#"{"a":1}"#, #"{"b":22}"#, #"{"c":333}"#])
        #expect(lent(events) == Array("{\"a\":1}\n{\"b\":22}\n{\"c\":333}\n".utf8))
        #expect(lent(Array(events[1...])) == Array("{\"b\":22}\n{\"c\":333}\n".utf8))
        #expect(events[1].body == Array(#"{"b":22}"#.utf8) && events[1].body.count == 8)
        #expect(events[1].body.bytes == Array(#"{"b":22}"#.utf8) && events[1].body.slice.elementsEqual(events[1].body))
        #expect(String(decoding: events[2].body, as: UTF8.self) == #"{"c":333}"#)
    }

    @Test func linesThatDoNotLieOneAfterTheOtherInOneBufferAreNotLent() {
        let events = oneRead([#"{"a":1}"#, #"{"b":22}"#, #"{"c":333}"#])
        #expect(lent([events[0], events[2]]) == nil, "a gap: a sink's filter took the middle one out")
        #expect(lent([events[1], events[0]]) == nil, "out of order")
        #expect(lent([makeEvent(1), makeEvent(2)]) == nil, "a buffer per event, without newlines")
        // The same bytes in another buffer, right where the next line would be: not the same buffer.
        let elsewhere = oneRead([#"{"a":1}"#, #"{"b":22}"#])
        #expect(lent([events[0], elsewhere[1]]) == nil)
        // Without the newline after it.
        var bare = makeEvent(1)
        bare.body = EventBody(Array(#"{"a":1}x"#.utf8), range: 0..<7)
        #expect(lent([bare]) == nil)
        #expect(lent([]) == nil)
    }

    @Test func theSinkWritesLentLinesAndGatheredOnesAlike() async throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "event-body")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("out.ndjson").path
        let sink = try NDJSONSink(path: path, fsync: .never)
        let events = oneRead([#"{"a":1}"#, #"{"b":22}"#, #"{"c":333}"#])
        try await sink.accept(events)
        try await sink.accept([events[0], events[2]])
        try await sink.accept([makeEvent(7)])
        try await sink.close()
        let expected = "{\"a\":1}\n{\"b\":22}\n{\"c\":333}\n" + "{\"a\":1}\n{\"c\":333}\n" + "{\"n\":7}\n"
        #expect(try String(contentsOfFile: path, encoding: .utf8) == expected)
    }
}
