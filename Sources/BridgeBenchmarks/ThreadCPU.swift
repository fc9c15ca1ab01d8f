import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// CPU time of this process's threads by name (from /proc/self/task), to tell apart in one process the work of
/// librdkafka's threads (`rdk:*`), of its mock cluster (`rdk:mock`) and of ours.
enum ThreadCPU {
    /// CPU seconds (user + system) per thread id, with the thread's name.
    static func snapshot() -> [Int: (name: String, seconds: Double)] {
        var result: [Int: (name: String, seconds: Double)] = [:]
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return [:] }
        for task in tasks {
            guard let id = Int(task),
                let text = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")")
            else { continue }
            let name = String(text[text.index(after: open)..<close])
            // After the name: state is field 3; utime and stime are fields 14 and 15.
            let fields = text[text.index(after: close)...].split(separator: " ")
            guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
            result[id] = (name, (user + system) / ticks)
        }
        return result
    }

    /// The CPU seconds spent between two snapshots, grouped by `group(name)`; threads that ended in between are
    /// missing.
    static func spent(
        from before: [Int: (name: String, seconds: Double)],
        to after: [Int: (name: String, seconds: Double)],
        group: (String) -> String
    ) -> [String: Double] {
        var result: [String: Double] = [:]
        for (id, thread) in after {
            result[group(thread.name), default: 0] += thread.seconds - (before[id]?.seconds ?? 0)
        }
        return result
    }
}
