internal import COpenSSL
import Synchronization

/// An HMAC-SHA256 key prepared once and used for many messages (webhook signatures).
///
/// Keying the context costs more than hashing a small message, so the keyed `EVP_MAC_CTX` is kept and
/// re-initialised with its own key for each message.
package final class HMACSHA256: @unchecked Sendable {
    // @unchecked: an EVP_MAC_CTX is not thread-safe; `handle` is only used while `lock` is held.
    private let handle: OpaquePointer
    /// Guards `handle`; the value says whether the context has already produced a code (and must be re-keyed).
    private let lock = Mutex(false)

    /// Prepares `key`.
    package init(key: [UInt8]) {
        guard let handle = EVP_MAC_CTX_new(HMACAlgorithm.shared.mac) else { fatalError("EVP_MAC_CTX_new failed") }
        self.handle = handle
        // An empty key is valid HMAC input; OpenSSL needs a non-null pointer to tell it from "keep the old key".
        let keyed = (key.isEmpty ? [0] : key).withUnsafeBufferPointer { buffer in
            copenssl_hmac_sha256_init(handle, buffer.baseAddress, key.count)
        }
        precondition(keyed == 1, "EVP_MAC_init(HMAC-SHA256) failed")
    }

    deinit {
        EVP_MAC_CTX_free(handle)
    }

    /// The 32-byte authentication code of the concatenation of `parts`.
    package func authenticationCode(parts: [UnsafeRawBufferPointer]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { output, initialized in
            lock.withLock { used in
                if used {
                    // NULL key: start a new message with the key (and digest) the context already holds.
                    precondition(copenssl_hmac_restart(handle) == 1, "EVP_MAC_init failed")
                }
                used = true
                for part in parts where part.count > 0 {
                    precondition(EVP_MAC_update(handle, part.baseAddress, part.count) == 1, "EVP_MAC_update failed")
                }
                var length = 0
                precondition(EVP_MAC_final(handle, output.baseAddress, &length, 32) == 1, "EVP_MAC_final failed")
                initialized = length
            }
        }
    }

    /// The 32-byte authentication code of `message`.
    package func authenticationCode(_ message: some Collection<UInt8>) -> [UInt8] {
        Crypto.withContiguousBytes(message) { authenticationCode(parts: [$0]) }
    }
}

/// The fetched HMAC implementation, shared by every context.
final class HMACAlgorithm: @unchecked Sendable {
    // @unchecked: an EVP_MAC is an immutable, reference-counted algorithm object; OpenSSL documents fetched
    // algorithms as safe to use from several threads at once (crypto(7), "Fetching algorithms").
    /// The `EVP_MAC` for HMAC, fetched once and never freed (it lives as long as the process).
    let mac: OpaquePointer

    /// The process-wide instance.
    static let shared = HMACAlgorithm()

    private init() {
        guard let fetched = EVP_MAC_fetch(nil, "HMAC", nil) else { fatalError("EVP_MAC_fetch(HMAC) failed") }
        mac = fetched
    }
}
