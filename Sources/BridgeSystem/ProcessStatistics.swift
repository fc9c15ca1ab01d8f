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

    /// When the process started, in seconds since the Unix epoch: the boot time (`/proc/stat`, `btime`) plus the
    /// process's start in clock ticks after boot (`/proc/self/stat`, field 22).
    public static func startTimeSeconds() -> Double? {
        guard let stat = readSmallFile("/proc/self/stat"), let system = readSmallFile("/proc/stat", limit: 65536),
            let ticks = startTicks(stat: stat), let boot = bootTime(procStat: system)
        else { return nil }
        let perSecond = Int(sysconf(Int32(_SC_CLK_TCK)))
        guard perSecond > 0 else { return nil }
        return Double(boot) + Double(ticks) / Double(perSecond)
    }

    /// Open file descriptors: the entries of `/proc/self/fd` (the directory's own descriptor, open while counting,
    /// is left out).
    public static func openFileDescriptors() -> Double? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let isDot = withUnsafeBytes(of: entry.pointee.d_name) { $0.first == UInt8(ascii: ".") }
            if !isDot { count += 1 }
        }
        return Double(max(0, count - 1))
    }

    /// The most file descriptors the process may open (the soft `RLIMIT_NOFILE`).
    public static func maxFileDescriptors() -> Double? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        return limit.rlim_cur == rlim_t.max ? .infinity : Double(limit.rlim_cur)  // rlim_t.max is RLIM_INFINITY
    }

    /// Field 22 (`starttime`) of a `stat` line, counted from the last `)` like `cpuSeconds`.
    static func startTicks(stat: String) -> UInt64? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count > 19 else { return nil }
        return UInt64(fields[19])
    }

    /// The `btime` line of `/proc/stat`: the boot time in seconds since the epoch.
    static func bootTime(procStat: String) -> UInt64? {
        for line in procStat.split(separator: "\n") where line.hasPrefix("btime ") {
            return UInt64(line.dropFirst(6).filter { $0 != " " && $0 != "\r" })
        }
        return nil
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

    /// Up to `limit` bytes of a file (procfs files report size 0, so read until end of file); nil on any error.
    private static func readSmallFile(_ path: String, limit: Int = 4096) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: limit)
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
