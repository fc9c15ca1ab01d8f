import BridgeTLS

/// Encodes client frames (RFC 6455 §5.2–5.3): every frame is masked with a fresh key from a CSPRNG.
package struct FrameEncoder: Sendable {
    private var keys = MaskKeyGenerator()

    /// Creates an encoder.
    package init() {}

    /// The encoded size of a frame carrying `payloadCount` bytes (header, mask key and payload).
    package static func frameLength(payloadCount: Int) -> Int {
        let lengthBytes = payloadCount < 126 ? 0 : payloadCount <= 0xFFFF ? 2 : 8
        return 2 + lengthBytes + 4 + payloadCount
    }

    /// Writes one masked frame into `destination` (at least `frameLength(payloadCount:)` bytes) and returns
    /// its length. The payload is copied once, masked on the way.
    package mutating func encode(
        opcode: WebSocketOpcode,
        fin: Bool = true,
        payload: UnsafeRawBufferPointer,
        into destination: UnsafeMutableRawBufferPointer
    ) -> Int {
        let count = payload.count
        precondition(destination.count >= Self.frameLength(payloadCount: count), "frame buffer too small")
        precondition(!opcode.isControl || (fin && count <= 125), "control frames are unfragmented, ≤125 bytes")
        destination[0] = (fin ? 0x80 : 0) | opcode.rawValue
        var offset = 2
        if count < 126 {
            destination[1] = 0x80 | UInt8(count)
        } else if count <= 0xFFFF {
            destination[1] = 0x80 | 126
            destination.storeBytes(of: UInt16(count).bigEndian, toByteOffset: 2, as: UInt16.self)
            offset = 4
        } else {
            destination[1] = 0x80 | 127
            destination.storeBytes(of: UInt64(count).bigEndian, toByteOffset: 2, as: UInt64.self)
            offset = 10
        }
        let key = keys.next()
        destination.storeBytes(of: key, toByteOffset: offset, as: UInt32.self)
        offset += 4
        Self.mask(
            payload,
            key: key,
            into: UnsafeMutableRawBufferPointer(rebasing: destination[offset..<(offset + count)])
        )
        return offset + count
    }

    /// Encodes one frame into a new array (tests and rare control frames).
    package mutating func encode(opcode: WebSocketOpcode, fin: Bool = true, payload: [UInt8]) -> [UInt8] {
        let length = Self.frameLength(payloadCount: payload.count)
        return [UInt8](unsafeUninitializedCapacity: length) { buffer, initialized in
            initialized = payload.withUnsafeBytes { payloadBytes in
                encode(opcode: opcode, fin: fin, payload: payloadBytes, into: UnsafeMutableRawBufferPointer(buffer))
            }
        }
    }

    /// XORs `source` with the 4-byte `key` (in wire order) into `destination`, eight bytes at a time.
    /// Masking is its own inverse, so this also unmasks.
    package static func mask(
        _ source: UnsafeRawBufferPointer,
        key: UInt32,
        into destination: UnsafeMutableRawBufferPointer
    ) {
        let count = source.count
        // `key` holds the wire bytes in memory order; repeated twice it masks 8 bytes loaded in memory order.
        let wide = UInt64(key) | UInt64(key) << 32
        var index = 0
        while index + 8 <= count {
            let word = source.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            destination.storeBytes(of: word ^ wide, toByteOffset: index, as: UInt64.self)
            index += 8
        }
        withUnsafeBytes(of: key) { keyBytes in
            while index < count {
                destination[index] = source[index] ^ keyBytes[index & 3]
                index += 1
            }
        }
    }
}

/// Masking keys from OpenSSL's CSPRNG, fetched 4 KiB (1024 keys) at a time: RFC 6455 §5.3 asks for keys an
/// attacker cannot predict, and one `RAND_bytes` call per 1024 frames keeps the cost per frame negligible.
package struct MaskKeyGenerator: Sendable {
    private var pool: [UInt32] = []
    private var index = 0

    /// Creates a generator; the pool is filled on first use.
    package init() {}

    /// The next key.
    package mutating func next() -> UInt32 {
        if index == pool.count {
            pool = [UInt32](unsafeUninitializedCapacity: 1024) { buffer, initialized in
                Crypto.fillRandom(UnsafeMutableRawBufferPointer(buffer))
                initialized = 1024
            }
            index = 0
        }
        defer { index += 1 }
        return pool[index]
    }
}
