import BridgeWebSocket

/// Server bytes through `MessageDecoder` (the `FrameParser` + `MessageAssembler` pair the connection runs).
///
/// Input: byte 0 picks the message size limit (2^0 … 2^20 bytes), byte 1 seeds how the stream is cut into reads
/// and how messages are fragmented for the round trip; the rest is what the server sent.
///
/// Invariants:
/// - Resumable: the stream cut into reads of any sizes gives the same messages, control frames and error as one read.
/// - Every text message is UTF-8, no message exceeds the limit, no control payload exceeds 125 bytes.
/// - Round trip: each decoded message, encoded by `FrameEncoder` in fragments with pings between them and turned
///   into server frames (mask removed), decodes to the same message and pings.
enum WebSocketFramesTarget {
    static let target = FuzzTarget(
        name: "websocket-frames",
        summary: "frame parser + message assembler: resumable, limits kept, encoder round trip",
        run: run
    )

    /// What decoding produced, in order; a protocol error ends it.
    enum Step: Equatable {
        case message(WebSocketMessage)
        case control(ControlFrame)
        case failure(WebSocketProtocolError)
    }

    static func run(_ bytes: UnsafeRawBufferPointer) {
        var input = FuzzInput(bytes)
        let limit = 1 << (Int(input.byte()) % 21)
        let seed = UInt64(input.byte())
        let stream = input.rest

        let whole = decode([stream], limit: limit)
        var random = SplitMix64(seed: seed)
        var reads: [UnsafeRawBufferPointer] = []
        var start = 0
        while start < stream.count {
            let size = min(random.next(in: 1...17), stream.count - start)
            reads.append(UnsafeRawBufferPointer(rebasing: stream[start..<(start + size)]))
            start += size
        }
        let cut = decode(reads, limit: limit)
        require(whole == cut, "one read gave \(whole), \(reads.count) reads gave \(cut)")

        for step in whole {
            switch step {
            case .message(let message):
                require(message.bytes.count <= limit, "a message of \(message.bytes.count) bytes passed limit \(limit)")
                if case .text(let text) = message {
                    require(String(validating: text, as: UTF8.self) != nil, "a text message that is not UTF-8")
                }
                roundTrip(message, random: &random)
            case .control(let frame):
                require(frame.payload.count <= 125, "a control frame of \(frame.payload.count) bytes")
            case .failure:
                break
            }
        }
    }

    /// Decodes `reads` in order with one decoder, as the connection does.
    static func decode(_ reads: [UnsafeRawBufferPointer], limit: Int) -> [Step] {
        var decoder = MessageDecoder(maxMessageSize: limit)
        var steps: [Step] = []
        for read in reads {
            var offset = 0
            var messages: [WebSocketMessage] = []
            repeat {
                do {
                    let control = try decoder.decode(read, offset: &offset, into: &messages)
                    steps += messages.map(Step.message)
                    messages.removeAll()
                    if let control { steps.append(.control(control)) }
                } catch {
                    steps += messages.map(Step.message)
                    steps.append(.failure(error))
                    return steps
                }
            } while offset < read.count
        }
        return steps
    }

    /// Encodes `message` as client frames (fragments, a ping between them), unmasks them into server frames and
    /// checks that they decode to the message and the pings.
    static func roundTrip(_ message: WebSocketMessage, random: inout SplitMix64) {
        var encoder = FrameEncoder()
        let payload = message.bytes
        let fragments = random.next(in: 1...3)
        var stream: [UInt8] = []
        var expected: [Step] = []
        var start = 0
        for fragment in 0..<fragments {
            let isLast = fragment == fragments - 1
            let end = isLast ? payload.count : start + (payload.count - start) / 2
            let opcode: WebSocketOpcode
            if fragment > 0 {
                opcode = .continuation
            } else if case .text = message {
                opcode = .text
            } else {
                opcode = .binary
            }
            stream += serverFrame(encoder.encode(opcode: opcode, fin: isLast, payload: Array(payload[start..<end])))
            start = end
            if !isLast {
                let ping = Array(payload.prefix(random.next(in: 0...125)))
                stream += serverFrame(encoder.encode(opcode: .ping, payload: ping))
                expected.append(.control(ControlFrame(opcode: .ping, payload: ping)))
            }
        }
        expected.append(.message(message))
        let decoded = stream.withUnsafeBytes { decode([$0], limit: max(payload.count, 1)) }
        require(decoded == expected, "round trip of \(message) gave \(decoded)")
    }

    /// A masked client frame as a server would send it: mask bit cleared, key removed, payload unmasked.
    static func serverFrame(_ frame: [UInt8]) -> [UInt8] {
        let lengthCode = frame[1] & 0x7F
        let keyOffset = lengthCode == 126 ? 4 : lengthCode == 127 ? 10 : 2
        let key = frame[keyOffset..<(keyOffset + 4)].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        var server = Array(frame[..<keyOffset])
        server[1] &= 0x7F
        let masked = Array(frame[(keyOffset + 4)...])
        var payload = [UInt8](repeating: 0, count: masked.count)
        masked.withUnsafeBytes { source in
            payload.withUnsafeMutableBytes { FrameEncoder.mask(source, key: key, into: $0) }
        }
        return server + payload
    }
}
