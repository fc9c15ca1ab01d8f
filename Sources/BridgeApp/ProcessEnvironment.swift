#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The process's environment variables, read from `environ` (what Foundation's `ProcessInfo` would give).
///
/// The bridge binary reads its environment only here: linking Foundation for `ProcessInfo` alone mapped its four
/// libraries (with ICU) into every bridge process, about 8 MiB of the resident set (BENCHMARKS.md, "steady RSS").
enum ProcessEnvironment {
    /// Every `NAME=value` entry; an entry without `=` is skipped, and of a name given twice the first one wins (as
    /// `getenv` reads it).
    static func current() -> [String: String] {
        var variables: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.utf8.firstIndex(of: UInt8(ascii: "=")) {
                let name = String(text[..<equals])
                if variables[name] == nil { variables[name] = String(text[text.index(after: equals)...]) }
            }
            entry += 1
        }
        return variables
    }
}
