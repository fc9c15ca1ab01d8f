import BridgeJSON
import BridgeNATS

/// What comes back on a JetStream publisher's reply subscription, through `JetStreamReply`: the subject that names
/// the publish, and the payload that acknowledges or refuses it. Both are the server's (or anyone's who can publish
/// to the inbox) bytes.
///
/// Input: the subject's last token up to the first `\n`, then the payload.
///
/// Invariants:
/// - `token` gives nil or a non-zero number whose decimal digits are exactly the subject's text after the prefix.
/// - `outcome` never traps; an acknowledgement names a non-empty stream of at most 256 bytes (and the ellipsis that
///   says it was cut, `PeerText`), and its payload
///   is a JSON object (as the tree parser reads it) with no `error` member, whose `seq`, where it fits an `Int64`
///   and the name is written once without escapes (the in-place reader takes the first of duplicate names, the tree
///   keeps the last: RFC 8259 leaves them undefined, and a server never sends them), is the acknowledged sequence; a payload longer than `maximumLength` is never an acknowledgement.
/// - The acknowledgement read byte by byte (`usualAcknowledgement`), where it reads one, is the one the JSON scanner
///   reads from the same payload (`scannedOutcome`).
enum JetStreamReplyTarget {
    static let target = FuzzTarget(
        name: "jetstream-reply",
        summary: "JetStream reply subjects and acknowledgement payloads read in place",
        run: run
    )

    static let prefix = Array("_INBOX.FUZZPREFIX0123456789.".utf8)

    static func run(_ bytes: UnsafeRawBufferPointer) {
        let input = Array(bytes)
        let newline = input.firstIndex(of: 0x0A) ?? input.count
        let subject = prefix + input[..<newline]
        let payload = Array(input[min(newline + 1, input.count)...])
        checkToken(subject: subject, suffix: Array(input[..<newline]))
        checkOutcome(payload)
    }

    static func checkToken(subject: [UInt8], suffix: [UInt8]) {
        let token = subject.withUnsafeBytes { subject in
            prefix.withUnsafeBytes { JetStreamReply.token(subject: subject, prefix: $0) }
        }
        guard let token else { return }
        require(token != 0, "token 0 accepted")
        require(Array(String(token).utf8) == suffix, "token \(token) from \(suffix)")
    }

    static func checkOutcome(_ payload: [UInt8]) {
        let outcome = payload.withUnsafeBytes { JetStreamReply.outcome(payload: $0) }
        if let fast = payload.withUnsafeBytes({ JetStreamReply.usualAcknowledgement($0) }) {
            let scanned = payload.withUnsafeBytes { JetStreamReply.scannedOutcome(payload: $0) }
            require(scanned.ack == fast, "read byte by byte as \(fast), by the scanner as \(scanned)")
        }
        guard case .acknowledged(let ack) = outcome else { return }
        require(payload.count <= JetStreamReply.maximumLength, "an acknowledgement of \(payload.count) bytes")
        require(
            !ack.stream.isEmpty && ack.stream.utf8.count <= 256 + 3,
            "stream name of \(ack.stream.utf8.count) bytes"
        )
        guard case .object(let members)? = try? JSONValue.parse(payload) else {
            require(false, "an acknowledgement the tree parser does not read as an object")
            return
        }
        require(!members.contains { $0.key == "error" }, "an acknowledgement with an error member")
        let written = Array("\"seq\"".utf8)
        let once =
            !payload.contains(UInt8(ascii: "\\"))
            && payload.indices.filter { payload[$0...].starts(with: written) }.count == 1
        if once, let sequence = JSONValue.object(members)["seq"]?.int64Value {
            require(
                sequence >= 0 && UInt64(sequence) == ack.sequence,
                "seq \(sequence) acknowledged as \(ack.sequence)"
            )
        }
    }
}
