import Foundation
import Testing

@testable import BridgeSystem

/// Found by a clean-clone CI run beside another: the JSON copy (`DIRECTUS_BRIDGE_JSON_LOG_FILE`) held two lines of
/// different threads in the other order than stderr, 1 ms apart. Both destinations get the lines in one order.
@Suite struct LogCopyOrderTests {
    @Test func stderrAndTheCopyReceiveTheLinesOfAllThreadsInOneOrder() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("log-copy-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = directory.appendingPathComponent("stderr.log").path
        let fd = open(text, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        let copy = try LogCopyFile(path: directory.appendingPathComponent("copy.json").path)
        let handler = StderrLogHandler(level: .info, format: .text, fd: fd, colour: false, jsonCopy: copy)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for line in 0..<2_000 {
                handler.log(level: .info, message: "line \(thread)-\(line)", metadata: [:], label: "t")
            }
        }
        let order = { (path: String, marker: String) -> [String] in
            ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { line in
                line.range(of: marker).map { String(line[$0.upperBound...].prefix { $0 != "\"" && $0 != " " }) }
            }
        }
        let onStderr = order(text, "line ")
        let inCopy = order(directory.appendingPathComponent("copy.json").path, "\"message\":\"line ")
        #expect(onStderr.count == 8_000 && inCopy.count == 8_000)
        let firstDifference = onStderr.indices.first { $0 >= inCopy.count || onStderr[$0] != inCopy[$0] }
        #expect(firstDifference == nil, "the orders part at line \(firstDifference ?? -1)")
    }
}
