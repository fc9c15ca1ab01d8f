/// The entries of one batch, in blocks of `perBlock`: every allocation under a kilobyte. glibc's malloc serves a
/// request of a kilobyte or more only after merging every small block freed since (`malloc_consolidate`), and the
/// thread that produces has just freed thousands (librdkafka's messages and headers, after their reports): one array
/// of 500 entries per batch cost that merge per batch, 8 % of the producing thread's time in pages (BENCHMARKS.md,
/// "Kafka: the producing thread's locks and allocations per event"). Blocks of this size come from the per-thread
/// cache and the small bins, which merge nothing first.
struct KafkaDeliveryEntries {
    /// Entries per block: 16 × 32 bytes.
    static let perBlock = 16
    private static let shift = 4

    /// The blocks (a table of one pointer per 16 entries: under a kilobyte up to 2,000 messages per batch).
    private let blocks: UnsafeMutablePointer<UnsafeMutablePointer<KafkaDeliveryEntry>>
    private let blockCount: Int
    private let count: Int

    /// Room for `count` entries, not initialized yet.
    init(count: Int) {
        self.count = count
        blockCount = max(1, (count + Self.perBlock - 1) >> Self.shift)
        blocks = .allocate(capacity: blockCount)
        for block in 0..<blockCount {
            (blocks + block).initialize(to: .allocate(capacity: Self.perBlock))
        }
    }

    /// Initializes every entry: message `index`'s holds `batch` and `index`.
    func initialize(batch: UnsafeMutableRawPointer) {
        for index in 0..<count {
            entry(at: index).initialize(to: KafkaDeliveryEntry(batch: batch, index: index))
        }
    }

    /// Message `index`'s entry.
    func entry(at index: Int) -> UnsafeMutablePointer<KafkaDeliveryEntry> {
        blocks[index >> Self.shift] + (index & (Self.perBlock - 1))
    }

    /// Frees the blocks (`KafkaDeliveryEntry` is trivial: nothing to deinitialize).
    func deallocate() {
        for block in 0..<blockCount { blocks[block].deallocate() }
        blocks.deallocate()
    }
}
