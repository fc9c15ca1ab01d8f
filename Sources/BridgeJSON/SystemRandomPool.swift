import Synchronization

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Random 64-bit words from the kernel's CSPRNG (the source `SystemRandomNumberGenerator` reads), fetched
/// 4 KiB per read of `/dev/urandom` (the same generator as getrandom(2), which Swift's Glibc module does not
/// declare). `SystemRandomNumberGenerator` makes one system call per word (about 280 ns here), which would be the
/// largest cost of an event id; the shared pool makes it about 10 ns. 4 KiB rather than getentropy's 256 bytes:
/// most of a call's cost is fixed (the kernel's per-call setup was 10 % of the live path's CPU with 256-byte
/// batches, profiled with `perf record` on live-pipeline).
/// The pool is one process-wide value behind a lock, so copies of a generator never repeat each other's bits.
struct SystemRandomPool: RandomNumberGenerator {
    private struct Words {
        var words = [UInt64](repeating: 0, count: 512)
        var next = 512
        /// `/dev/urandom`, opened at the first refill and kept for the process's life (-1: could not be opened).
        var device: Int32?
    }

    private static let shared = Mutex(Words())

    /// Next random word.
    mutating func next() -> UInt64 {
        Self.shared.withLock { pool in
            if pool.next == pool.words.count {
                Self.refill(&pool)
                pool.next = 0
            }
            defer { pool.next += 1 }
            return pool.words[pool.next]
        }
    }

    private static func refill(_ pool: inout Words) {
        if pool.device == nil { pool.device = open("/dev/urandom", O_RDONLY | O_CLOEXEC) }
        let device = pool.device ?? -1
        let filled = pool.words.withUnsafeMutableBytes { buffer in
            // Reads of up to 32 MiB from a seeded urandom are whole unless a signal cuts them short.
            device >= 0 && read(device, buffer.baseAddress.unsafelyUnwrapped, buffer.count) == buffer.count
        }
        if !filled {
            // No /dev/urandom (a bare chroot) or an interrupted read: the system generator, one call per word.
            var system = SystemRandomNumberGenerator()
            for index in pool.words.indices { pool.words[index] = system.next() }
        }
    }
}
