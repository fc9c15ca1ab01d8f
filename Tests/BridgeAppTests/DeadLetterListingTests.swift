import Testing

@testable import BridgeApp
@testable import BridgeSinks

/// Issue 23, item 7: `dlq list` printed keys raw: a key with escape sequences and a line break forged a row on the
/// terminal. Every text of a letter (key, id, collection, sink, reason) is shown cleaned and bounded, one row each.
@Suite struct DeadLetterListingTests {
    static let forging =
        "7\u{1B}[2K\r\u{1B}[1A\nact_999  articles  forged-row  1  -  2026-01-01T00:00:00.000Z  x  fine\u{9B}2J"

    private func letter(key: String, reason: String, id: String = "act_1", sink: String = "1-h:443-0a1b2c3d")
        -> DeadLetter
    {
        DeadLetter(
            seq: 1, sink: sink, eventID: id, collection: "articles", key: key, body: Array(#"{"id":"x"}"#.utf8),
            attempts: 12, createdAt: 1_000, deadAt: 2_000, reason: reason, lastStatus: 503, response: [])
    }

    @Test(arguments: [true, false])
    func aKeyWithEscapesAndALineBreakStaysInItsRow(header: Bool) {
        let letters = [
            letter(key: Self.forging, reason: "HTTP 503 \u{1B}]0;title\u{7}\n" + String(repeating: "r", count: 10_000)),
            letter(key: "2", reason: "fine", id: "act_2\u{1B}[31m", sink: "0-ndjson\n-x"),
        ]
        let lines = DeadLetterCommandRunner.rows(letters, header: header)
        let printed = lines.joined(separator: "\n")
        #expect(printed.utf8.filter { $0 == 0x0A || $0 == 0x0D }.count == letters.count - (header ? 0 : 1), "\(lines)")
        for line in lines {
            #expect(!line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, "\(line)")
            #expect(line.utf8.count < 4096, "a row of \(line.utf8.count) bytes")
        }
        #expect(lines.last?.hasPrefix("act_2") == true, "\(lines)")
    }
}
