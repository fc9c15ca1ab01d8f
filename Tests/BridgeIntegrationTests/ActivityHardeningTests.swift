import BridgeTestSupport
import Foundation
import Testing

extension BridgeProcess {
    /// The process's resident memory (VmRSS) in bytes, nil once it is gone.
    var residentBytes: Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            return kilobytes.map { $0 * 1024 }
        }
        return nil
    }
}

/// Activity mode against hostile or careless peers (issue 10): a jump of the activity id sequence.
@Suite(.serialized) struct ActivityHardeningTests {
    @Test func aJumpOfTheActivityIdSequenceCostsNoMemoryAndLosesNoLateCommit() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(config: activityConfig(url: emulator.url, pollInterval: "300ms"))
        #expect(bridge.waitUntilConnected(), "bridge did not connect: \(bridge.stderr)")
        let before = try emulator.newestActivityID()

        // A slow writer takes the next id and commits late; then the sequence is reseeded 10^12 higher and a fast
        // writer commits at once. The bridge sees a gap of 10^12 ids whose lowest id arrives later.
        try emulator.control("delay-commit", ["collection": "articles", "delay_ms": 1500])
        try emulator.control("generator", ["collection": "articles", "count": 1, "interval_ms": 0, "kind": "create"])
        try emulator.control("activity-sequence", ["jump": 1_000_000_000_000])
        let fast = try emulator.create("articles", ["title": "after the jump"])
        try emulator.waitForGenerators()
        let expected = try emulator.activityIDs(["articles"], after: before)
        #expect(expected.count == 2 && expected[1] > 1_000_000_000_000, "\(expected)")

        #expect(bridge.waitUntil { $0.events.count >= 2 }, "got \(bridge.eventIDs): \(bridge.stderr)")
        #expect(bridge.eventIDs == ["act_\(expected[1])", "act_\(expected[0])"], "the late commit arrives after")
        #expect(bridge.events.first?["key"] as? String == fast)
        // Before the fix, enumerating the gap's ids passed 300 MiB within seconds and kept growing.
        let resident = try #require(bridge.residentBytes)
        #expect(resident < 100 << 20, "resident memory \(resident >> 20) MiB")
        try emulator.create("articles", ["title": "later"])
        #expect(bridge.waitUntil { $0.events.count >= 3 }, "\(bridge.stderr)")
        #expect(bridge.residentBytes.map { $0 < 100 << 20 } ?? false)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}
