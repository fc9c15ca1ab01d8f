/// The reader's state: guarded by `WebSocketConnection.reader`.
struct ReaderState {
    /// Bytes read from the stream and not yet decoded.
    let buffer: ReadBuffer
    /// The sans-IO receive pipeline.
    var decoder: MessageDecoder
    /// An error to throw on the next receive, after the messages decoded before it were returned.
    var pendingError: WebSocketError?
}

/// The read buffer: bytes `start..<end` are read but not yet decoded. Owns its memory.
final class ReadBuffer {
    /// The memory, allocated once per connection.
    let storage: UnsafeMutableRawBufferPointer
    /// The first byte not yet decoded.
    var start = 0
    /// One past the last byte read.
    var end = 0

    /// Allocates `capacity` bytes.
    init(capacity: Int) {
        storage = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { storage.deallocate() }

    /// Whether everything read has been decoded.
    var isEmpty: Bool { start == end }

    /// Adds bytes (the handshake's leftover); they always fit because the buffer is empty and large.
    func append(_ bytes: ArraySlice<UInt8>) {
        precondition(end + bytes.count <= storage.count, "handshake leftover larger than the read buffer")
        bytes.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: storage[end...]).copyMemory(from: $0) }
        end += bytes.count
    }
}

/// The writer's state: guarded by `WebSocketConnection.writer`. Reuses one frame buffer across sends.
struct FrameWriter: ~Copyable, @unchecked Sendable {
    // @unchecked: the buffer is owned by this value (allocated here, freed in deinit) and the value lives inside
    // the `writer` mutex, so only the thread holding the lock touches the memory.
    private var encoder = FrameEncoder()
    private var buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)

    /// Buffers above this size are given back after use, so one large message does not pin memory.
    private static let keptCapacity = 256 << 10

    /// Encodes a masked frame into the reused buffer and returns the encoded bytes.
    mutating func encode(_ opcode: WebSocketOpcode, payload: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let length = FrameEncoder.frameLength(payloadCount: payload.count)
        if buffer.count < length {
            buffer.deallocate()
            buffer = .allocate(byteCount: length, alignment: 16)
        }
        let written = encoder.encode(opcode: opcode, payload: payload, into: buffer)
        return UnsafeRawBufferPointer(rebasing: buffer[..<written])
    }

    /// Shrinks the buffer after a large message.
    mutating func releaseLargeBuffer() {
        if buffer.count > Self.keptCapacity {
            buffer.deallocate()
            buffer = .allocate(byteCount: 4096, alignment: 16)
        }
    }

    deinit { buffer.deallocate() }
}
