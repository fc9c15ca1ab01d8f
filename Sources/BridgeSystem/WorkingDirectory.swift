#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The process's working directory, which relative paths in the config are resolved against; "/" when it cannot be
/// read (it was removed), where relative paths could not be opened anyway.
public func currentWorkingDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    guard getcwd(&buffer, buffer.count) != nil else { return "/" }
    return String(cString: buffer)
}
