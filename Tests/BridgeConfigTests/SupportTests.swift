import BridgeConfig
import Testing

@Suite struct DurationTextTests {
    @Test(arguments: [
        ("250ms", Duration.milliseconds(250)), ("10s", .seconds(10)), ("5m", .seconds(300)), ("1h", .seconds(3600)),
        ("1m30s", .seconds(90)), ("1h2m3s4ms", .milliseconds(3_723_004)), ("1.5s", .milliseconds(1500)),
        (".5s", .milliseconds(500)), ("0s", .zero), ("100us", .microseconds(100)), ("7ns", .nanoseconds(7)),
        ("2m0.5s", .milliseconds(120_500)),
    ])
    func parses(text: String, expected: Duration) {
        #expect(DurationText.parse(text) == expected)
    }

    @Test(arguments: [
        "", "10", "s", "-1s", "+1s", "1 s", "1.s", "1sec", "1d", "1m30", "99999999999999999h",
        // The whole part fits in Int64 nanoseconds, whole plus fraction does not (it trapped before).
        "2562047.9h", "9223372036.9s", "2562047h47m16.9s", "9223372036854775807ns1ns",
    ])
    func rejects(text: String) {
        #expect(DurationText.parse(text) == nil)
    }

    @Test func formatsLargestUnitsFirstAndRoundTrips() {
        #expect(DurationText.format(.milliseconds(500)) == "500ms")
        #expect(DurationText.format(.seconds(90)) == "1m30s")
        #expect(DurationText.format(.seconds(28800)) == "8h")
        #expect(DurationText.format(.zero) == "0s")
        for duration in [Duration.milliseconds(3_723_004), .nanoseconds(1_500), .seconds(86_400)] {
            #expect(DurationText.parse(DurationText.format(duration)) == duration)
        }
    }

    @Test func formatsDurationsBeyondNanosecondRangeAsTheBound() {
        let bound = DurationText.format(.nanoseconds(Int64.max))
        #expect(DurationText.format(.seconds(Int64.max)) == bound)
        #expect(DurationText.format(.seconds(Int64.min)) == "-" + bound)
        #expect(DurationText.format(.nanoseconds(Int64.min)) == "-" + bound)
    }
}

@Suite struct SuggestionTests {
    @Test func suggestsCloseKeys() {
        let keys = ["collection", "uid", "events", "query", "snapshot"]
        #expect(Suggestion.closest(to: "colection", in: keys) == "collection")
        #expect(Suggestion.closest(to: "Collection", in: keys) == "collection")
        #expect(Suggestion.closest(to: "evnets", in: keys) == "events")
        #expect(Suggestion.closest(to: "uuid", in: keys) == "uid")
        #expect(Suggestion.closest(to: "table", in: keys) == nil)
        #expect(Suggestion.closest(to: "max-in-flight", in: ["max_in_flight"]) == "max_in_flight")
    }

    @Test func editDistanceCountsTranspositionsAsOne() {
        func distance(_ a: String, _ b: String) -> Int {
            Suggestion.editDistance(Array(a.unicodeScalars), Array(b.unicodeScalars))
        }
        #expect(distance("kitten", "sitting") == 3)
        #expect(distance("evnets", "events") == 1)
        #expect(distance("", "abc") == 3)
        #expect(distance("same", "same") == 0)
    }
}
