#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// What the NDJSON sink asks of the file behind its descriptor.
enum NDJSONOutputFile {
    /// Whether `fd` is a regular file (a pipe, terminal or device cannot be cut back).
    static func isRegularFile(_ fd: Int32) -> Bool {
        guard fd >= 0 else { return false }
        var status = stat()
        return fstat(fd, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
    }

    /// Whether the file open at `fd` has no name left (`rm` of the output while the bridge runs): what is written to
    /// it reaches nobody, and nothing but a reopen would ever end that.
    static func isDeleted(_ fd: Int32) -> Bool {
        var status = stat()
        return fstat(fd, &status) == 0 && status.st_mode & S_IFMT == S_IFREG && status.st_nlink == 0
    }
}
