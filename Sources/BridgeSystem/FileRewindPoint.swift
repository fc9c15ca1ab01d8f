#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Where a write starts in a regular file, so that a write that failed part-way (disk full, a file size limit) is
/// cut off again and leaves no torn line behind, and its retry no line twice: the NDJSON sink's batches and the JSON
/// log copy's lines (docs/RELIABILITY.md, "Careless or hostile operators").
///
/// For a file opened with `O_APPEND` and for stdout redirected into a file alike: a shell's `>` opens without
/// `O_APPEND`, so the start is the descriptor's offset and the offset goes back there too (else the next write would
/// leave a hole of zeros); `>>` appends, so the start is the file's end.
public struct FileRewindPoint {
    private let offset: off_t
    private let appends: Bool

    /// The current start of the next write to `fd`, a regular file opened with `O_APPEND` or not (`appends`); nil
    /// when the descriptor has none.
    public init?(_ fd: Int32, appends: Bool) {
        self.appends = appends
        offset = lseek(fd, 0, appends ? SEEK_END : SEEK_CUR)
        guard offset >= 0 else { return nil }
    }

    /// Cuts the file back to the start and moves the descriptor's offset there (best effort: a file that cannot be
    /// cut keeps what was written, as before this existed).
    public func rewind(_ fd: Int32) {
        _ = ftruncate(fd, offset)
        if !appends { _ = lseek(fd, offset, SEEK_SET) }
    }
}
