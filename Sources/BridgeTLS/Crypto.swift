internal import COpenSSL

/// The cryptographic helpers other targets need, so that OpenSSL is imported in this target only:
/// CSPRNG bytes (WebSocket keys and masks), SHA-1 (`Sec-WebSocket-Accept`), HMAC-SHA256 (webhook signatures)
/// and base64.
package enum Crypto {
    // MARK: - Random

    /// `count` bytes from OpenSSL's CSPRNG (`RAND_bytes`).
    package static func randomBytes(count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fillRandom(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    /// Fills `buffer` from OpenSSL's CSPRNG (`RAND_bytes`).
    ///
    /// A failing CSPRNG (no entropy source at all) stops the process: continuing with predictable keys is worse.
    package static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        let result = RAND_bytes(base.assumingMemoryBound(to: UInt8.self), Int32(buffer.count))
        precondition(result == 1, "RAND_bytes failed: the system has no usable entropy source")
    }

    // MARK: - Digests

    /// The 20-byte SHA-1 digest of `bytes`.
    package static func sha1(_ bytes: some Collection<UInt8>) -> [UInt8] {
        withContiguousBytes(bytes) { input in
            [UInt8](unsafeUninitializedCapacity: 20) { output, initialized in
                var length: UInt32 = 0
                let result = EVP_Digest(input.baseAddress, input.count, output.baseAddress, &length, EVP_sha1(), nil)
                precondition(result == 1 && length == 20, "EVP_Digest(SHA-1) failed")
                initialized = 20
            }
        }
    }

    // MARK: - HMAC

    /// HMAC-SHA256 of `message` under `key` (32 bytes).
    ///
    /// For many messages under one key (webhook signing), `HMACSHA256` keeps the keyed context and is cheaper.
    package static func hmacSHA256(key: [UInt8], message: some Collection<UInt8>) -> [UInt8] {
        withContiguousBytes(message) { HMACSHA256(key: key).authenticationCode(parts: [$0]) }
    }

    /// HMAC-SHA256 under `key` of the concatenation of `parts` (e.g. `id`, `.`, `timestamp`, `.`, `body`),
    /// without building the concatenation.
    package static func hmacSHA256(key: [UInt8], parts: [UnsafeRawBufferPointer]) -> [UInt8] {
        HMACSHA256(key: key).authenticationCode(parts: parts)
    }

    // MARK: - Helpers

    /// Runs `body` over contiguous storage of `bytes`, copying only when the collection has none.
    static func withContiguousBytes<R>(
        _ bytes: some Collection<UInt8>,
        _ body: (UnsafeRawBufferPointer) -> R
    ) -> R {
        if let result = bytes.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return Array(bytes).withUnsafeBytes(body)
    }
}
