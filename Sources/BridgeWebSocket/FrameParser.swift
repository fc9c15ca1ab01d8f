/// A sans-IO, resumable parser of server frames (RFC 6455 §5.2).
///
/// Feed it whatever the socket returned; it never needs the whole frame at once. A header split across reads is
/// collected in a 14-byte scratch area; payload bytes are handed out as slices of the input (no copy here), so a
/// payload is copied only when the `MessageAssembler` assembles a message that arrived in several pieces.
///
/// Header rules are checked as soon as the bytes that carry them arrive: reserved bits (no extension is
/// negotiated), reserved opcodes, masked server frames, fragmented or oversized (>125) control frames, and 64-bit
/// lengths with the top bit set are all 1002 protocol errors.
package struct FrameParser: Sendable {
    /// One step of parsing.
    package enum Event {
        /// A frame starts. At least one `.payload` event follows, the last with `isFrameEnd` set.
        case header(FrameHeader)
        /// Payload bytes of the current frame: a slice of the input, valid until the input buffer changes.
        /// Empty (and `isFrameEnd`) for a zero-length frame.
        case payload(UnsafeRawBufferPointer, isFrameEnd: Bool)
    }

    /// Bytes of a header that arrived split across inputs.
    private var scratch: [UInt8] = []
    /// Payload bytes of the current frame not yet handed out; `nil` while reading a header.
    private var remaining: Int?

    /// Creates a parser at a frame boundary.
    package init() {
        scratch.reserveCapacity(14)
    }

    /// Whether the parser sits exactly between two frames.
    package var isAtFrameBoundary: Bool { remaining == nil && scratch.isEmpty }

    /// Parses the next event from `input[offset...]` and advances `offset` past what it used.
    /// Returns `nil` when the input is used up (feed the next read, starting at offset 0).
    package mutating func next(
        _ input: UnsafeRawBufferPointer,
        offset: inout Int
    ) throws(WebSocketProtocolError) -> Event? {
        if let left = remaining {
            let available = input.count - offset
            if left > 0 && available == 0 { return nil }
            let count = min(left, available)
            let slice = UnsafeRawBufferPointer(rebasing: input[offset..<(offset + count)])
            offset += count
            remaining = left == count ? nil : left - count
            return .payload(slice, isFrameEnd: left == count)
        }
        // Fast path: the whole header is in the input.
        if scratch.isEmpty && input.count - offset >= 2 {
            let first = input[offset]
            let second = input[offset + 1]
            let length = try Self.headerLength(first: first, second: second)
            if input.count - offset >= length {
                let header = try Self.header(UnsafeRawBufferPointer(rebasing: input[offset..<(offset + length)]))
                offset += length
                remaining = header.payloadLength
                return .header(header)
            }
        }
        // Slow path: collect the header byte by byte across inputs.
        while offset < input.count {
            scratch.append(input[offset])
            offset += 1
            if scratch.count < 2 {
                _ = try Self.headerLength(first: scratch[0], second: nil)
                continue
            }
            let length = try Self.headerLength(first: scratch[0], second: scratch[1])
            if scratch.count == length {
                let header = try Self.header(scratch)
                scratch.removeAll(keepingCapacity: true)
                remaining = header.payloadLength
                return .header(header)
            }
        }
        return nil
    }

    // MARK: - Header rules

    /// Validates the first two header bytes (the first alone when `second` is nil) and returns the header length.
    private static func headerLength(first: UInt8, second: UInt8?) throws(WebSocketProtocolError) -> Int {
        if first & 0x70 != 0 {
            throw .protocolError("reserved bits set without a negotiated extension")
        }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
            throw .protocolError("reserved opcode \(first & 0x0F)")
        }
        if opcode.isControl && first & 0x80 == 0 {
            throw .protocolError("fragmented control frame")
        }
        guard let second else { return 2 }
        if second & 0x80 != 0 {
            throw .protocolError("masked frame from the server")
        }
        let code = second & 0x7F
        if opcode.isControl && code > 125 {
            throw .protocolError("control frame payload over 125 bytes")
        }
        switch code {
        case 126: return 4
        case 127: return 10
        default: return 2
        }
    }

    /// Decodes a complete header whose first two bytes already passed `headerLength`.
    private static func header(
        _ bytes: some RandomAccessCollection<UInt8>
    ) throws(WebSocketProtocolError) -> FrameHeader {
        let start = bytes.startIndex
        func byte(_ offset: Int) -> UInt8 { bytes[bytes.index(start, offsetBy: offset)] }
        let first = byte(0)
        let code = Int(byte(1) & 0x7F)
        var length = code
        if code == 126 {
            length = Int(byte(2)) << 8 | Int(byte(3))
        } else if code == 127 {
            var value: UInt64 = 0
            for offset in 2..<10 { value = value << 8 | UInt64(byte(offset)) }
            if value >> 63 != 0 { throw .protocolError("64-bit payload length with the top bit set") }
            length = Int(value)
        }
        return FrameHeader(
            fin: first & 0x80 != 0,
            reservedBits: (first >> 4) & 0x7,
            opcode: WebSocketOpcode(rawValue: first & 0x0F)!,  // checked by headerLength
            maskKey: nil,
            payloadLength: length
        )
    }
}
