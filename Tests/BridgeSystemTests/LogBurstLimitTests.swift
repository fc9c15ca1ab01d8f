import BridgeSystem
import Testing

/// `LogBurstLimit`: a flood of one kind of line logs `burst` examples per window and then a total, said once the
/// window ended (at the next line or the caller's periodic flush) or at shutdown, never lost and never twice.
@Suite struct LogBurstLimitTests {
    /// Drives a limit and records what it let out: "line" per line, the number per total.
    struct Recorder {
        var limit = LogBurstLimit(burst: 3, window: .seconds(10))
        var out: [String] = []
        let start = ContinuousClock.now

        mutating func line(at seconds: Double) {
            var out = self.out
            limit.log(now: start + .seconds(seconds)) { out.append("line") } total: { out.append("\($0)") }
            self.out = out
        }

        mutating func flush(at seconds: Double) {
            var out = self.out
            limit.flush(now: start + .seconds(seconds)) { out.append("\($0)") }
            self.out = out
        }
    }

    @Test func aFloodLogsTheBurstAndThenOneTotalAfterItsWindow() {
        var recorder = Recorder()
        for i in 0..<50 { recorder.line(at: Double(i) * 0.1) }  // 50 lines within 5 s
        #expect(recorder.out == ["line", "line", "line"])
        recorder.flush(at: 9.9)
        #expect(recorder.out.count == 3, "the window has not ended: \(recorder.out)")
        recorder.flush(at: 10)
        #expect(recorder.out == ["line", "line", "line", "47"])
        recorder.flush(at: 30)
        #expect(recorder.out.count == 4, "a total is said once")
    }

    @Test func theTotalComesBeforeTheNextWindowsLines() {
        var recorder = Recorder()
        for i in 0..<5 { recorder.line(at: Double(i)) }
        recorder.line(at: 12)  // no flush in between: the total of the first window goes first
        recorder.line(at: 13)
        #expect(recorder.out == ["line", "line", "line", "2", "line", "line"])
    }

    @Test func linesUnderTheBurstAreAllLoggedAndNothingIsTotalled() {
        var recorder = Recorder()
        recorder.line(at: 0)
        recorder.line(at: 5)
        recorder.line(at: 11)  // a new window
        recorder.line(at: 12)
        recorder.line(at: 13)
        recorder.flush(at: 60)
        #expect(recorder.out == Array(repeating: "line", count: 5))
    }

    @Test func finishSaysWhatIsHeldBackAtOnce() {
        var limit = LogBurstLimit(burst: 1, window: .seconds(10))
        let now = ContinuousClock.now
        var lines = 0
        var totals: [Int] = []
        for _ in 0..<4 { limit.log(now: now) { lines += 1 } total: { totals.append($0) } }
        limit.finish { totals.append($0) }
        limit.finish { totals.append($0) }
        #expect(lines == 1 && totals == [3])
    }
}
