internal import CLinux

/// How glibc's allocator treats large blocks: every block of at least `mmapThreshold` bytes gets its own mapping,
/// returned to the system when freed.
///
/// glibc starts at 128 KiB but raises the threshold to the size of each mapped block freed (up to 32 MiB), so after
/// the first large REST answer the next ones (16 MiB pages cut at the limit, an item read alone with 64 MiB allowed)
/// came from the heap, which keeps freed memory: a hostile Directus repeating a 32 MiB answer that passes every
/// bound left the bridge at 134 MiB (96 MiB over steady) where the answer itself takes 32 MiB
/// (`HostileAnswerMemoryTests`; 70 MiB with the fixed threshold). Setting the threshold fixes it and stops the
/// raising (docs/RELIABILITY.md "The unit").
public enum LargeAllocations {
    /// The fixed threshold: 4 MiB, above every buffer of the steady state (event batches, frames, lines).
    public static let mmapThreshold: Int32 = 4 << 20

    /// Sets the fixed threshold; false when glibc refused it.
    @discardableResult
    public static func returnToSystemWhenFreed() -> Bool {
        clinux_set_mmap_threshold(mmapThreshold) == 1
    }
}
