import BridgeTestSupport
import Foundation
import Testing

/// NDJSON on stdout that an operator redirected into a file (`directus-bridge run > events.ndjson`), which then
/// cannot take a whole batch: a full disk, or a file size limit (`ulimit -f`, systemd's `LimitFSIZE=`). The write
/// fails part-way; the retry must leave every line whole and write none twice, as it does for a `path:` file
/// (docs/RELIABILITY.md, "Careless or hostile operators").
@Suite(.serialized) struct StandardOutputFileTests {
    @Test func aSnapshotIntoStdoutRedirectedToAFileThatFillsIsWrittenWholeAndOnce() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        for start in stride(from: 0, to: 4000, by: 500) {
            try emulator.rest("POST", "/items/articles", (start..<start + 500).map { ["title": "item \($0)"] })
        }
        let total = try emulator.keys(of: "articles").count
        let yaml = liveConfig(
            url: emulator.url, subscriptions: "  - collection: articles\n    snapshot: true"
        ).replacingOccurrences(of: "mode: live", with: "mode: activity")
        // 4,000 lines are about 1 MB: the limit (600 blocks of 512 or 1,024 bytes) cuts the snapshot part-way.
        let bridge = try BridgeProcess.run(config: yaml, fileSizeLimitBlocks: 600)
        #expect(bridge.waitForLog("File too large", timeout: 60), "\(bridge.stderr.suffix(3000))")
        // The disk has room again.
        let lift = Process()
        lift.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        lift.arguments = ["--pid", "\(bridge.pid)", "--fsize=unlimited"]
        try lift.run()
        #expect(ChildExit.wait(lift, timeout: 30) == 0)

        let snapshotDone = bridge.waitUntil(timeout: 120) { $0.stderr.contains("snapshot done") }
        #expect(snapshotDone, "\(bridge.stderr.suffix(3000))")
        var ids: [String: Int] = [:]
        var torn: [String] = []
        for line in bridge.lines {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let id = object["id"] as? String
            else {
                torn.append(String(line.prefix(200)))
                continue
            }
            ids[id, default: 0] += 1
        }
        let twice = ids.filter { $0.value > 1 }.keys.sorted()
        #expect(torn.count == 0, "\(torn.count) torn lines, the first: \(torn.first ?? "")")
        #expect(twice.count == 0, "\(twice.count) ids twice, e.g. \(twice.prefix(3))")
        #expect(ids.count == total, "\(ids.count) of \(total) items")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}
