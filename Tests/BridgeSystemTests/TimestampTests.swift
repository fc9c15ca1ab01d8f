import Glibc
import BridgeSystem
import Testing

@Suite struct TimestampTests {
    @Test func formatsRFC3339WithMilliseconds() {
        let time = Timestamp(microsecondsSinceEpoch: 1_796_206_500_123_456)
        #expect(time.rfc3339 == "2026-12-02T10:15:00.123Z")
    }

    @Test func formatsTimesBeforeTheEpoch() {
        #expect(Timestamp(microsecondsSinceEpoch: -1_000).rfc3339 == "1969-12-31T23:59:59.999Z")
    }

    @Test(arguments: [
        ("2026-12-02T10:15:00.123Z", Int64(1_796_206_500_123_000)),
        ("2026-12-02T10:15:00Z", Int64(1_796_206_500_000_000)),
        ("2026-12-02T11:15:00+01:00", Int64(1_796_206_500_000_000)),
        ("2026-12-02 10:15:00", Int64(1_796_206_500_000_000)),
        ("2026-12-02T10:15:00.123456Z", Int64(1_796_206_500_123_456)),
    ])
    func parsesDirectusTimestamps(text: String, micros: Int64) {
        #expect(Timestamp(rfc3339: text)?.microsecondsSinceEpoch == micros)
    }

    @Test func rejectsGarbage() {
        #expect(Timestamp(rfc3339: "yesterday") == nil)
        #expect(Timestamp(rfc3339: "2026-12-02X10:15:00Z") == nil)
    }
}

@Suite struct RedactorTests {
    @Test func hidesEverySecretAndPrefersTheLongest() {
        let redactor = Redactor(secrets: ["abcd", "abcdefgh", "xy"])
        #expect(redactor.redact("token=abcdefgh and abcd, xy") == "token=[REDACTED] and [REDACTED], xy")
    }
}

@Suite struct StderrLogHandlerTests {
    @Test func jsonLinesCarryTimeLevelMessageAndFields() {
        let handler = StderrLogHandler(level: .info, format: .json, colour: false)
        let line = handler.render(
            level: .warning, message: "reconnecting", metadata: ["reconnect.delay": "1.5s"], label: "session",
            at: Timestamp(microsecondsSinceEpoch: 0))
        #expect(
            line
                == #"{"time":"1970-01-01T00:00:00.000Z","level":"warn","logger":"session","message":"reconnecting","fields":{"reconnect.delay":"1.5s"}}"#
        )
    }

    @Test func textLinesQuoteValuesWithSpaces() {
        let handler = StderrLogHandler(level: .info, format: .text, colour: false)
        let line = handler.render(
            level: .info, message: "subscribed", metadata: ["reason": "two words"], label: "x",
            at: Timestamp(microsecondsSinceEpoch: 0))
        #expect(line.hasPrefix("1970-01-01T00:00:00.000Z INFO  subscribed"))
        #expect(line.hasSuffix(#"reason="two words""#))
    }
}

@Suite struct BlockingExecutorTests {
    @Test func runsBlockingWorkOffThePoolConcurrently() async throws {
        let executor = BlockingExecutor(name: "test", idleTimeoutSeconds: 1)
        // Ten jobs that each block 100 ms finish in far less than 1 s only if each got its own thread.
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<10 {
                group.addTask { try await executor.perform { usleep(100_000); return index } }
            }
            var sum = 0
            for try await value in group { sum += value }
            #expect(sum == 45)
        }
        #expect(ContinuousClock.now - start < .milliseconds(900))
    }
}
