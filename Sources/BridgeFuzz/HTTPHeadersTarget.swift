import BridgeCore
import BridgeEvents
import BridgeDirectus
import BridgeActivity
import BridgeSinks
import BridgeHTTP

/// Response header lines as curl hands them over, through `HTTPHeaderLine` (what every transfer keeps of a
/// response), then a webhook receiver's `Retry-After` through `RetryAfter.parse` and the sink's `RetryPolicy`.
///
/// Input: byte 0 picks "now" for `Retry-After` dates; the rest is header lines, each ending at `\n`.
///
/// Invariants:
/// - `HTTPHeaderLine.parse` gives nil exactly for a line without a name before its first colon; otherwise the name
///   is the bytes before the colon with ASCII letters lower-cased, and the value the bytes after it without
///   surrounding spaces, tabs, CR or LF.
/// - `HTTPHeaderLine.line(_:namesOneOf:)` agrees with the parsed name.
/// - `Retry-After`: a delay is never negative nor beyond `RetryAfter.longest`; digits give their value (capped);
///   and the policy's retry delay never exceeds the longest scheduled delay, whatever the header says.
enum HTTPHeadersTarget {
    static let target = FuzzTarget(
        name: "http-headers",
        summary: "response header lines and Retry-After through the webhook retry policy",
        run: run
    )

    static let policy = RetryPolicy(schedule: [.seconds(5), .seconds(30), .seconds(120)], maxAttempts: 12)
    static let nows: [Int64] = [0, 1_700_000_000, -1, .max, .min, 253_402_300_799, 784_111_777]
    static let kept: [[UInt8]] = [Array("retry-after".utf8), Array("content-type".utf8)]

    static func run(_ bytes: UnsafeRawBufferPointer) {
        var input = FuzzInput(bytes)
        let now = nows[Int(input.byte()) % nows.count]
        for line in Array(input.rest).split(separator: 0x0A, omittingEmptySubsequences: false) {
            let withEnd = Array(line) + [0x0A]
            withEnd.withUnsafeBytes { check(line: $0, now: now) }
        }
    }

    static func check(line: UnsafeRawBufferPointer, now: Int64) {
        let parsed = HTTPHeaderLine.parse(line)
        let colon = line.firstIndex(of: UInt8(ascii: ":"))
        require((parsed == nil) == (colon == nil || colon == 0), "parse and the colon disagree")
        let keptName = parsed.map { kept.contains(Array($0.name.utf8)) } ?? false
        require(HTTPHeaderLine.line(line, namesOneOf: kept) == keptName, "line(namesOneOf:) disagrees with parse")
        guard let (name, value) = parsed, let colon else { return }

        let expectedName = line[..<colon].map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        require(name == String(decoding: expectedName, as: UTF8.self), "name \(name.debugDescription)")
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        let rest = line[(colon + 1)...]
        let trimmed = rest.drop(while: isSpace).reversed().drop(while: isSpace).reversed()
        require(value == String(decoding: Array(trimmed), as: UTF8.self), "value \(value.debugDescription)")

        guard name == "retry-after" else { return }
        let delay = RetryAfter.parse(value, now: now)
        if let delay {
            require(delay >= .zero && delay <= RetryAfter.longest, "Retry-After \(value.debugDescription) → \(delay)")
        }
        if !value.isEmpty, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            let capped = Int64(value).map { min($0, RetryAfter.longest.components.seconds) }
            require(delay == .seconds(capped ?? RetryAfter.longest.components.seconds), "digits \(value) → \(delay!)")
        }
        let longest = policy.longestScheduledDelay
        for status in [429, 503] {
            if case .retry(let after) = policy.decide(attempt: 1, outcome: .status(status, retryAfter: delay), jitter: 1.2)
            {
                require(after >= .zero && after <= max(longest, .seconds(5) * 1.2), "retry after \(after)")
            }
        }
    }
}
