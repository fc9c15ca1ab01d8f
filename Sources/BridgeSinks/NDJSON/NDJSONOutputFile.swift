#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// What the NDJSON sink asks of the file behind its descriptor.
enum NDJSONOutputFile {
    /// What a failed write to the descriptor leaves, asked once per open (two system calls per batch saved).
    enum Kind: Equatable {
        /// A pipe, terminal or device: what it took cannot be taken back.
        case stream
        /// A regular file, which a failed batch is cut off again; whether the descriptor appends (`O_APPEND`).
        case file(appends: Bool)
    }

    /// The kind of `fd` (a descriptor that is not open counts as a stream: nothing to cut back).
    static func kind(of fd: Int32) -> Kind {
        var status = stat()
        guard fd >= 0, fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return .stream }
        let flags = fcntl(fd, F_GETFL)
        return .file(appends: flags >= 0 && flags & O_APPEND != 0)
    }
}
