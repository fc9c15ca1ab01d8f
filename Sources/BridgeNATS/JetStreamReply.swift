internal import BridgeJSON
internal import BridgeSystem
internal import CNats

/// Reads what comes back on a publisher's reply subscription (pure): which publish a reply answers (the last token
/// of its subject) and what JetStream said about it.
///
/// A publish acknowledgement is `{"stream":"NAME","seq":N}` (with `"duplicate":true` when the stream already had
/// the `Nats-Msg-Id`), a refusal `{"error":{"code":C,"err_code":E,"description":"…"}}`; a publish no stream took
/// (none listens, or its leader is being elected) comes back as an empty 503 status message, which the caller
/// recognises from its header. Everything is the server's text: numbers are range-checked, text is cleaned and
/// bounded, and anything unreadable is a retriable failure (the message is published again with the same
/// `Nats-Msg-Id`, which the stream deduplicates), never a trap.
package enum JetStreamReply {
    /// Replies longer than this are not read: an acknowledgement is well under 200 bytes.
    package static let maximumLength = 16 * 1024

    /// The publish token at the end of `subject`, which must be `prefix` (ending in `.`) followed by the decimal
    /// digits of a non-zero token that fits 64 bits, written as the publisher writes it (no leading zero: `01` is
    /// not a spelling of token 1); nil for anything else.
    package static func token(subject: UnsafeRawBufferPointer, prefix: UnsafeRawBufferPointer) -> UInt? {
        let digits = subject.count - prefix.count
        guard digits >= 1, digits <= 20, subject.starts(with: prefix), subject[prefix.count] != UInt8(ascii: "0")
        else { return nil }
        var token: UInt64 = 0
        for byte in subject[prefix.count...] {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            let (times10, overflow) = token.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflow && !carry else { return nil }
            token = sum
        }
        return token == 0 ? nil : UInt(token)
    }

    /// What the reply payload says: acknowledged, or why not.
    package static func outcome(payload: UnsafeRawBufferPointer) -> JetStreamOutcome {
        if let ack = usualAcknowledgement(payload) { return .acknowledged(ack) }
        return scannedOutcome(payload: payload)
    }

    /// The acknowledgement as nats-server writes it, `{"stream":"NAME", "seq":N}` with `,"duplicate": true` before
    /// the brace when it is one (or the same without the two spaces), read byte by byte without the JSON scanner
    /// (which was a tenth of the reply thread in the stream; BENCHMARKS.md, "Issue 26, item 6: JetStream messages
    /// freed without libnats's collector"). Only a name of 1–256 printable ASCII bytes without quote or backslash and
    /// a sequence of 1–20 digits without a leading zero that fits 64 bits are taken, and nothing else around them
    /// (no other space, member or order): valid JSON that `scannedOutcome` reads to the same acknowledgement. nil
    /// for anything else, which the scanner then reads and checks as before.
    package static func usualAcknowledgement(_ payload: UnsafeRawBufferPointer) -> JetStreamAck? {
        let opening = #"{"stream":""#.utf8
        guard payload.starts(with: opening) else { return nil }
        var position = opening.count
        let nameStart = position
        while position < payload.count, payload[position] != UInt8(ascii: "\"") {
            guard payload[position] >= 0x20 && payload[position] < 0x7F && payload[position] != UInt8(ascii: "\\")
            else { return nil }
            position += 1
        }
        let nameEnd = position
        guard nameEnd > nameStart, nameEnd - nameStart <= 256 else { return nil }
        let compact = #"","seq":"#.utf8
        let spaced = #"", "seq":"#.utf8
        if payload[position...].starts(with: compact) {
            position += compact.count
        } else if payload[position...].starts(with: spaced) {
            position += spaced.count
        } else {
            return nil
        }
        let digitsStart = position
        var sequence: UInt64 = 0
        while position < payload.count, payload[position] >= UInt8(ascii: "0"), payload[position] <= UInt8(ascii: "9") {
            let (times10, overflow) = sequence.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times10.addingReportingOverflow(UInt64(payload[position] - UInt8(ascii: "0")))
            guard !overflow && !carry else { return nil }
            sequence = sum
            position += 1
        }
        guard position > digitsStart, payload[digitsStart] != UInt8(ascii: "0") else { return nil }
        let rest = UnsafeRawBufferPointer(rebasing: payload[position...])
        let duplicate: Bool
        if rest.elementsEqual("}".utf8) {
            duplicate = false
        } else if rest.elementsEqual(#","duplicate": true}"#.utf8) || rest.elementsEqual(#","duplicate":true}"#.utf8) {
            duplicate = true
        } else {
            return nil
        }
        let name = String(decoding: UnsafeRawBufferPointer(rebasing: payload[nameStart..<nameEnd]), as: UTF8.self)
        return JetStreamAck(stream: name, sequence: sequence, duplicate: duplicate)
    }

    /// `outcome` by the JSON scanner: every reply that is not `usualAcknowledgement`'s.
    package static func scannedOutcome(payload: UnsafeRawBufferPointer) -> JetStreamOutcome {
        guard payload.count <= maximumLength,
            let object = try? JSONScanner.validate(payload, maxDepth: 4), object.kind == .object
        else { return unreadable }
        if let error = object.member("error", in: payload) {
            return .failed(refusal(error, in: payload))
        }
        guard let stream = object.member("stream", in: payload).flatMap({ streamName($0, in: payload) }),
            let sequence = object.member("seq", in: payload).flatMap({ unsignedInteger($0, in: payload) })
        else { return unreadable }
        let duplicate = object.member("duplicate", in: payload)?.kind == .true
        return .acknowledged(JetStreamAck(stream: stream, sequence: sequence, duplicate: duplicate))
    }

    /// A stream name: a non-empty string, cleaned and bounded. The usual name (printable ASCII, no escape) is read
    /// straight from the bytes, with nothing to clean; anything else is unescaped and cleaned.
    private static func streamName(_ range: JSONRange, in payload: UnsafeRawBufferPointer) -> String? {
        guard range.kind == .string, range.count > 2, range.start >= 0, range.end <= payload.count else { return nil }
        let text = UnsafeRawBufferPointer(rebasing: payload[(range.start + 1)..<(range.end - 1)])
        if text.count <= 256, text.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }) {
            return String(decoding: text, as: UTF8.self)
        }
        return range.stringValue(in: payload).flatMap { $0.isEmpty ? nil : PeerText.sanitized($0, maximumLength: 256) }
    }

    /// The failure of a publish that no stream took: no responders (a 503 status message).
    static let noResponders = JetStreamOutcome.failed(
        NATSError.from(
            status: NATS_NO_RESPONDERS,
            text: "no stream took the subject (none matches it, or its leader is being elected)",
            context: "publish"
        )
    )

    /// A reply that is not an acknowledgement this client can read.
    static let unreadable = JetStreamOutcome.failed(
        NATSError(
            kind: .retriable,
            status: Int32(bitPattern: NATS_ERR.rawValue),
            message: "publish: the server's reply is not a JetStream acknowledgement"
        )
    )

    /// The error of a refusal (`{"error":{…}}`), classified by its JetStream code as libnats's would be.
    private static func refusal(_ error: JSONRange, in payload: UnsafeRawBufferPointer) -> NATSError {
        let code = error.member("err_code", in: payload).flatMap { unsignedInteger($0, in: payload) }
        let description = error.member("description", in: payload)?.stringValue(in: payload) ?? ""
        return NATSError.from(
            status: NATS_ERR,
            jetStreamCode: code.map { Int(clamping: $0) } ?? 0,
            text: PeerText.sanitized(description),
            context: "publish"
        )
    }

    /// A JSON number that is a non-negative integer fitting 64 bits, written without sign, fraction or exponent.
    private static func unsignedInteger(_ range: JSONRange, in payload: UnsafeRawBufferPointer) -> UInt64? {
        guard range.kind == .number, let text = range.rawText(in: payload), text.utf8.count <= 20,
            text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return UInt64(text)
    }
}
