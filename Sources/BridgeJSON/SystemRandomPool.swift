import Synchronization

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Random 64-bit words from the kernel's CSPRNG (the source `SystemRandomNumberGenerator` reads), fetched
/// 256 bytes per `getentropy` call. `SystemRandomNumberGenerator` makes one system call per word (about 280 ns
/// here), which would be the largest cost of an event id; the shared pool makes it about 10 ns.
/// The pool is one process-wide value behind a lock, so copies of a generator never repeat each other's bits.
struct SystemRandomPool: RandomNumberGenerator {
    private struct Words {
        var words = [UInt64](repeating: 0, count: 32)
        var next = 32
    }

    private static let shared = Mutex(Words())

    /// Next random word.
    mutating func next() -> UInt64 {
        Self.shared.withLock { pool in
            if pool.next == pool.words.count {
                Self.refill(&pool.words)
                pool.next = 0
            }
            defer { pool.next += 1 }
            return pool.words[pool.next]
        }
    }

    private static func refill(_ words: inout [UInt64]) {
        let filled = words.withUnsafeMutableBytes { buffer in
            getentropy(buffer.baseAddress.unsafelyUnwrapped, buffer.count) == 0  // at most 256 bytes per call
        }
        if !filled {
            // getentropy cannot fail for 256 bytes on a kernel with getrandom(2); keep working if it ever does.
            var system = SystemRandomNumberGenerator()
            for index in words.indices { words[index] = system.next() }
        }
    }
}
