@testable import BridgeWebSocket

/// A server frame built independently of `FrameEncoder` (unmasked unless `mask` is given).
func serverFrame(
    _ opcode: UInt8,
    _ payload: [UInt8] = [],
    fin: Bool = true,
    rsv: UInt8 = 0,
    mask: [UInt8]? = nil
) -> [UInt8] {
    var bytes: [UInt8] = [(fin ? 0x80 : 0) | rsv << 4 | opcode]
    let maskBit: UInt8 = mask == nil ? 0 : 0x80
    if payload.count < 126 {
        bytes.append(maskBit | UInt8(payload.count))
    } else if payload.count <= 0xFFFF {
        bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
    } else {
        bytes.append(maskBit | 127)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((payload.count >> shift) & 0xFF)) }
    }
    if let mask {
        bytes += mask
        bytes += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    } else {
        bytes += payload
    }
    return bytes
}

/// One output of the receive pipeline, in arrival order.
enum Decoded: Equatable {
    case message(WebSocketMessage)
    case control(ControlFrame)
    /// A data message over the limit, read past (its size).
    case skipped(Int)

    static func text(_ text: String) -> Decoded { .message(.text(Array(text.utf8))) }
    static func binary(_ bytes: [UInt8]) -> Decoded { .message(.binary(bytes)) }
    static func ping(_ payload: [UInt8]) -> Decoded { .control(ControlFrame(opcode: .ping, payload: payload)) }
}

/// Runs `chunks` through one `MessageDecoder`, as successive socket reads would.
func decode(_ chunks: [[UInt8]], maxMessageSize: Int = 1 << 20, skipsOversized: Bool = false) throws -> [Decoded] {
    var decoder = MessageDecoder(maxMessageSize: maxMessageSize, skipsOversized: skipsOversized)
    var output: [Decoded] = []
    for chunk in chunks {
        try chunk.withUnsafeBytes { bytes in
            var offset = 0
            while true {
                let control = try decoder.decode(bytes, offset: &offset, skipped: { output.append(.skipped($0)) }) {
                    output.append(.message($0.copied()))
                    return true
                }
                guard let control else { break }
                output.append(.control(control))
            }
            precondition(offset == bytes.count, "the decoder must consume its whole input")
        }
    }
    return output
}

/// `bytes` cut in two at `offset`.
func split(_ bytes: [UInt8], at offset: Int) -> [[UInt8]] {
    [Array(bytes[..<offset]), Array(bytes[offset...])]
}

/// `bytes` one byte per read.
func byteByByte(_ bytes: [UInt8]) -> [[UInt8]] { bytes.map { [$0] } }

/// The decoder's error for `chunks`, or nil when it decodes.
func decodeError(_ chunks: [[UInt8]], maxMessageSize: Int = 1 << 20) -> WebSocketProtocolError? {
    do {
        _ = try decode(chunks, maxMessageSize: maxMessageSize)
        return nil
    } catch {
        return error as? WebSocketProtocolError
    }
}
