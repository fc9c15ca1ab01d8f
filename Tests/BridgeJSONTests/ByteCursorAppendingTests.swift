import Testing

@testable import BridgeJSON

/// `[UInt8].appendWriting(bound:_:)`: written straight into spare capacity when the bound fits there, through a
/// scratch buffer otherwise, with the same bytes either way and growth by what was written, not by the bound.
@Suite struct ByteCursorAppendingTests {
    static let text = Array("line \"one\"\n\u{1}é".utf8)
    static let expected = Array("x\"line \\\"one\\\"\\n\\u0001é\"".utf8)
    static let bound = ByteCursor.quotedBound(text.count)

    static func append(to bytes: inout [UInt8]) {
        text.withUnsafeBufferPointer { text in
            bytes.appendWriting(bound: bound) { $0.writeQuoted(utf8: text) }
        }
    }

    @Test(arguments: [0, 1, 2, 1_000])
    func theBytesAreTheSameWithRoomForTheBoundOrWithout(room: Int) {
        var bytes = Array("x".utf8)
        bytes.reserveCapacity(room == 0 ? 0 : 1 + Self.bound + room - 1)  // room 1: exactly the bound
        let capacity = bytes.capacity
        Self.append(to: &bytes)
        #expect(bytes == Self.expected)
        if capacity - 1 >= Self.bound {
            #expect(bytes.capacity == capacity, "written into the room it had")
        } else {
            #expect(bytes.capacity < 1 + Self.bound, "grown by what was written, not by the bound")
        }
        Self.append(to: &bytes)
        #expect(bytes == Self.expected + Self.expected.dropFirst())
    }
}
