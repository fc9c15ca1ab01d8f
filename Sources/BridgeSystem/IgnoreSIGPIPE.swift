#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Ignores SIGPIPE for the whole process: a peer closing a socket must be an error from `write`, not a kill
/// (OpenSSL and libcurl write with write(2), which raises SIGPIPE on a closed peer).
public func ignoreSIGPIPE() {
    signal(SIGPIPE, SIG_IGN)
}
