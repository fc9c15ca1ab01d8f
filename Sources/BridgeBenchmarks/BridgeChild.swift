import BridgeSystem
import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The `directus-bridge` binary next to this executable, run with `run --config PATH` in `directory`; stderr goes
/// to a file there, stdout to a file or to a `LineTimes` reader.
final class BridgeChild {
    let process = Process()
    let stderrPath: String

    init(config: String, directory: URL, stdout lines: LineTimes? = nil) throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("directus-bridge").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw BenchmarkFailure.helperDidNotStart("\(binary) is missing: build the directus-bridge product too")
        }
        var index = 0
        while FileManager.default.fileExists(atPath: directory.appendingPathComponent("stderr.\(index).log").path) {
            index += 1
        }
        stderrPath = directory.appendingPathComponent("stderr.\(index).log").path
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["run", "--config", config]
        process.currentDirectoryURL = directory
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        if let lines {
            let pipe = Pipe()
            process.standardOutput = pipe
            lines.read(from: pipe.fileHandleForReading)
        } else {
            process.standardOutput = FileHandle.nullDevice
        }
        try process.run()
    }

    /// Waits for `text` on stderr.
    func waitForLog(_ text: String, timeout: Duration) throws {
        let logged = try FileWatch(path: stderrPath).wait(timeout: timeout) {
            (try? String(contentsOfFile: stderrPath, encoding: .utf8))?.contains(text) ?? false
        }
        guard logged else {
            throw BenchmarkFailure.helperDidNotStart("directus-bridge: no \"\(text)\" in \(stderrPath)")
        }
    }

    /// `VmHWM` of the process in MiB.
    func peakMemoryMiB() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
        else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kib = line.split(separator: " ").compactMap { Double($0) }.first ?? 0
            return kib / 1024
        }
        return 0
    }

    /// SIGTERM, then waits.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }
}

/// Counts the lines of a growing file by reading only what was appended since the last call.
final class LineCounter {
    private let path: String
    private var offset: UInt64 = 0
    private var lines = 0

    init(path: String) { self.path = path }

    func count() -> Int {
        guard let handle = FileHandle(forReadingAtPath: path) else { return lines }
        defer { try? handle.close() }
        try? handle.seek(toOffset: offset)
        let data = handle.readDataToEndOfFile()
        offset += UInt64(data.count)
        lines += data.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        return lines
    }
}

/// Reads event lines from a pipe on a thread of its own and notes when each item key's first line arrived.
final class LineTimes: Sendable {
    private let arrivals = ConditionLock<[String: ContinuousClock.Instant]>([:])

    var count: Int { arrivals.withLock { $0.count } }

    func snapshot() -> [String: ContinuousClock.Instant] { arrivals.withLock { $0 } }

    /// Waits until lines with `count` different keys arrived; false when `deadline` passed first.
    func wait(forCount count: Int, deadline: ContinuousClock.Instant) -> Bool {
        arrivals.wait { arrivals in
            if arrivals.count >= count { return (true, nil) }
            let left = deadline - ContinuousClock.now
            return left <= .zero ? (false, nil) : (nil, left)
        }
    }

    func read(from handle: FileHandle) {
        let thread = Thread { [self] in
            var buffer: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let fd = handle.fileDescriptor
            while true {
                let count = Glibc.read(fd, &chunk, chunk.count)
                if count <= 0 { return }
                let now = ContinuousClock.now
                buffer += chunk[0..<count]
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = Array(buffer[..<newline])
                    buffer.removeSubrange(...newline)
                    if let key = Self.key(in: line) {
                        arrivals.withLock { if $0[key] == nil { $0[key] = now } }
                        arrivals.broadcast()
                    }
                }
            }
        }
        thread.start()
    }

    private static func key(in line: [UInt8]) -> String? {
        let text = String(decoding: line, as: UTF8.self)
        guard let range = text.range(of: "\"key\":\"") else { return nil }
        let rest = text[range.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
    }
}
