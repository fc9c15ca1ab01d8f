import BridgeTestSupport
import Foundation
import Testing

/// The JSON log copy (`DIRECTUS_BRIDGE_JSON_LOG_FILE`) on a disk that fills, with the shipped binary: a file size
/// limit (`ulimit -f`, with SIGXFSZ ignored) cuts a line part-way as a full disk does. A log shipper must find every
/// line whole or absent. Before: the copy ended in a torn line (docs/RELIABILITY.md, "Careless or hostile
/// operators").
@Suite(.serialized) struct LogCopyFullDiskTests {
    @Test func aLogCopyThatCannotTakeALineHoldsOnlyWholeLines() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "log-copy-full")
        let copy = directory.appendingPathComponent("copy.json").path
        // 4 blocks (2 KiB for `sh`'s `ulimit -f`): the start's lines fit, in the copy and on stderr (text, shorter);
        // each SIGHUP logs one more line, until one no longer fits in the copy.
        let bridge = try BridgeProcess.run(
            config: liveConfig(url: emulator.url, subscriptions: "  - collection: articles"), in: directory,
            environment: ["DIRECTUS_BRIDGE_JSON_LOG_FILE": copy], fileSizeLimitBlocks: 4)
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr.suffix(3000))")
        let newlines = { (path: String) in
            ((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()).count { $0 == 0x0A }
        }
        // Each line goes to stderr, then to the copy: two more on stderr than in the copy is one the copy lost.
        var cut = false
        for round in 1...8 where !cut {
            bridge.send(SIGHUP)
            let logged = bridge.waitUntil {
                $0.stderr.components(separatedBy: "reopened output files").count - 1 >= round
            }
            #expect(logged, "\(bridge.stderr.suffix(3000))")
            cut = bridge.stderr.count { $0 == "\n" } >= newlines(copy) + 2
        }
        #expect(cut, "\(bridge.stderr.suffix(3000))")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        let text = try String(contentsOfFile: copy, encoding: .utf8)
        let lines = text.split(separator: "\n")
        #expect(!lines.isEmpty && text.hasSuffix("\n"), "the copy ends in a torn line: \(text.suffix(300))")
        for line in lines {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "not whole: \(line)")
        }
    }
}
