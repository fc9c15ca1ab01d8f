#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The process's own resource use as Linux reports it under `/proc/self`, for the standard `process_*` metrics
/// that dashboards expect (resident memory, CPU time). Each read is one small file; nil when it cannot be read
/// or parsed (a kernel without procfs, a sandbox hiding it), never a trap.
public enum ProcessStatistics {
    /// Resident set size in bytes (`/proc/self/statm`, second field, in pages).
    public static func residentMemoryBytes() -> Double? {
        guard let text = readSmallFile("/proc/self/statm") else { return nil }
        return residentBytes(statm: text, pageSize: Int(sysconf(Int32(_SC_PAGESIZE))))
    }

    /// User plus system CPU time in seconds (`/proc/self/stat`, fields 14 and 15, in clock ticks).
    public static func cpuSeconds() -> Double? {
        guard let text = readSmallFile("/proc/self/stat") else { return nil }
        return cpuSeconds(stat: text, ticksPerSecond: Int(sysconf(Int32(_SC_CLK_TCK))))
    }

    /// The resident bytes in a `statm` line: `size resident shared text lib data dt`, counted in pages.
    static func residentBytes(statm: String, pageSize: Int) -> Double? {
        let fields = statm.split(separator: " ", omittingEmptySubsequences: true)
        guard pageSize > 0, fields.count >= 2, let pages = UInt64(fields[1]) else { return nil }
        return Double(pages) * Double(pageSize)
    }

    /// The CPU seconds in a `stat` line. The command name (field 2) is in parentheses and may itself hold spaces
    /// and parentheses, so fields are counted from the last `)`: after it come state (field 3) … utime (14),
    /// stime (15).
    static func cpuSeconds(stat: String, ticksPerSecond: Int) -> Double? {
        guard ticksPerSecond > 0, let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return nil }
        return (Double(user) + Double(system)) / Double(ticksPerSecond)
    }

    /// Up to 4 KiB of a file (procfs files report size 0, so read until end of file); nil on any error.
    private static func readSmallFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return read(descriptor, base + filled, buffer.count - filled)
            }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            filled += count
        }
        return String(decoding: bytes[..<filled], as: UTF8.self)
    }
}
