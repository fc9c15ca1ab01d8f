import Glibc
import BridgeSystem
import Synchronization
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

    /// Activity rows carry the server's timestamps: fields out of range are refused, and whatever parses can be
    /// written back (year 0000 with a positive offset is year -1, whose digits trapped before).
    @Test(arguments: [
        "2026-00-02T10:15:00Z", "2026-13-02T10:15:00Z", "2026-12-00T10:15:00Z", "2026-12-32T10:15:00Z",
        "2026-12-02T24:00:00Z", "2026-12-02T10:60:00Z", "2026-12-02T10:15:61Z", "2026-12-02T10:15:00+24:00",
        "2026-12-02T10:15:00-99:99", "2026-12-02T10:15:00+01:60",
    ])
    func rejectsFieldsOutOfRange(text: String) {
        #expect(Timestamp(rfc3339: text) == nil)
    }

    @Test(arguments: [
        "0000-01-01T00:00:00+23:59", "0000-01-01T00:00:00Z", "9999-12-31T23:59:60-23:59",
        "0000-01-01T00:00:00.999999999999999999999999+01:00",
    ])
    func extremeButValidTimesFormatWithoutTrapping(text: String) throws {
        let time = try #require(Timestamp(rfc3339: text))
        #expect(time.rfc3339.utf8.count == 24)
    }

    @Test(arguments: [Int64.min, Int64.max, -62_167_219_200_000_001, 253_402_300_800_000_000])
    func anyMicrosecondCountFormatsAsFourDigitYears(micros: Int64) {
        #expect(Timestamp(microsecondsSinceEpoch: micros).rfc3339.utf8.count == 24)
    }
}

@Suite struct RedactorTests {
    @Test func hidesEverySecretAndPrefersTheLongest() {
        let redactor = Redactor(secrets: ["abcd", "abcdefgh", "xy"])
        #expect(redactor.redact("token=abcdefgh and abcd, xy") == "token=[REDACTED] and [REDACTED], xy")
    }

    /// Issue 10, defect 7: every refresh brings a new access and refresh token. The redactor keeps the current
    /// and the previous one of each kind (the previous access token stays valid until it expires), not all.
    @Test func keepsOnlyTheCurrentRotatingSecrets() {
        var redactor = Redactor(secrets: ["configured-password"])
        for generation in 1...1000 {
            redactor.rotate("access-token-\(generation)", kind: .accessToken)
            redactor.rotate("refresh-token-\(generation)", kind: .refreshToken)
        }
        #expect(redactor.secrets.count == 1 + 2 * Redactor.generationsKept)
        #expect(
            redactor.redact("access-token-1000 access-token-999 refresh-token-1000 configured-password")
                == "[REDACTED] [REDACTED] [REDACTED] [REDACTED]"
        )
        #expect(redactor.redact("access-token-1 refresh-token-500") == "access-token-1 refresh-token-500")
        // The same token again (a refresh answered with an unchanged token) takes no second place.
        redactor.rotate("access-token-1000", kind: .accessToken)
        #expect(redactor.redact("access-token-999") == "[REDACTED]")
    }

    @Test func aRotatingSecretEqualToAConfiguredOneStaysHidden() {
        var redactor = Redactor(secrets: ["static-token-1234"])
        redactor.rotate("static-token-1234", kind: .accessToken)
        redactor.rotate("a-newer-token", kind: .accessToken)
        redactor.rotate("the-newest-token", kind: .accessToken)
        #expect(redactor.redact("static-token-1234") == "[REDACTED]")
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

    /// docs/configuration.md "Log fields": counts and ids are JSON integers, booleans booleans, durations numbers of
    /// seconds; the text format writes the same values as a person reads them.
    @Test func jsonFieldsKeepTheirTypesAndTextShowsThemPlainly() {
        let metadata: LogMetadata = [
            "count": 3, "cursor.position": Int64(170_008), "directus.token.expires": false,
            "reconnect.delay": Duration.milliseconds(1500), "webhook.retry.delay": Duration.milliseconds(250),
            "events.per_second": 2.5, "sink": "search-index", "lag.p99": LogValue.seconds(.infinity),
        ]
        let fields = metadata.mapValues(\.logValue)
        let json = StderrLogHandler(level: .info, format: .json, colour: false).render(
            level: .info, message: "m", metadata: fields, label: "x", at: Timestamp(microsecondsSinceEpoch: 0))
        #expect(
            json.hasSuffix(
                #""fields":{"count":3,"cursor.position":170008,"directus.token.expires":false,"events.per_second":2.5,"#
                    + #""lag.p99":null,"reconnect.delay":1.5,"sink":"search-index","webhook.retry.delay":0.25}}"#),
            "\(json)")
        let text = StderrLogHandler(level: .info, format: .text, colour: false).render(
            level: .info, message: "m", metadata: fields, label: "x", at: Timestamp(microsecondsSinceEpoch: 0))
        #expect(text.hasSuffix("reconnect.delay=1.5s sink=search-index webhook.retry.delay=250ms"), "\(text)")
        #expect(text.contains("count=3 cursor.position=170008 directus.token.expires=false events.per_second=2.5"))
        #expect(LogValue.seconds(1e300).text == "1e+300" && LogValue.seconds(-.infinity).text == "-inf")
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
    /// Ten jobs that each block until all ten are running at once: this only finishes if every job got a
    /// thread of its own (a pool that queued them behind each other would give up after 10 s and fail).
    @Test func everyBlockedJobGetsAThreadOfItsOwn() async throws {
        let executor = BlockingExecutor(name: "test", idleTimeoutSeconds: 1)
        let running = SharedCount()
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    try await executor.perform {
                        running.value.add(1, ordering: .relaxed)
                        for _ in 0..<10_000 {
                            if running.value.load(ordering: .relaxed) >= 10 { return true }
                            usleep(1_000)
                        }
                        return false
                    }
                }
            }
            var all: [Bool] = []
            for try await value in group { all.append(value) }
            return all
        }
        #expect(results == Array(repeating: true, count: 10))
    }
}

/// A counter several threads update.
final class SharedCount: Sendable {
    let value = Atomic<Int>(0)
}
