import Testing

@testable import BridgeNATS

/// Reading a publish's answer in place: acknowledgements, refusals and everything a hostile or broken peer may
/// send instead. Nothing traps; anything unreadable is a retriable failure (published again, deduplicated).
@Suite struct JetStreamReplyTests {
    private func outcome(_ text: String) -> JetStreamOutcome {
        Array(text.utf8).withUnsafeBytes { JetStreamReply.outcome(payload: $0) }
    }

    private func token(_ subject: String, prefix: String = "_INBOX.abc.") -> UInt? {
        Array(subject.utf8).withUnsafeBytes { subject in
            Array(prefix.utf8).withUnsafeBytes { JetStreamReply.token(subject: subject, prefix: $0) }
        }
    }

    private func isUnreadable(_ outcome: JetStreamOutcome) -> Bool {
        outcome.error?.isRetriable == true && outcome.error?.message.contains("not a JetStream acknowledgement") == true
    }

    @Test func anAcknowledgementGivesStreamSequenceAndDuplicate() {
        #expect(
            outcome(#"{"stream":"ORDERS","seq":42}"#).ack
                == JetStreamAck(stream: "ORDERS", sequence: 42, duplicate: false)
        )
        #expect(
            outcome(#" { "duplicate" : true , "seq" : 18446744073709551615, "stream":"S", "domain":"hub" } "#).ack
                == JetStreamAck(stream: "S", sequence: UInt64.max, duplicate: true)
        )
        #expect(outcome(#"{"stream":"S","seq":0,"duplicate":false}"#).ack?.duplicate == false)
        // Escaped or unusual names are unescaped, cleaned of control characters and bounded.
        #expect(outcome(#"{"stream":"S\u0041","seq":1}"#).ack?.stream == "SA")
        #expect(outcome(#"{"stream":"a\nb","seq":1}"#).ack?.stream == "a b")
        let long = outcome(#"{"stream":""# + String(repeating: "n", count: 1000) + #"","seq":1}"#).ack?.stream
        #expect(long.map { $0.utf8.count <= 260 } == true)
    }

    @Test func aRefusalKeepsItsJetStreamCodeAndClassification() {
        let tooBig = outcome(#"{"error":{"code":400,"err_code":10054,"description":"message size exceeds maximum"}}"#)
        #expect(tooBig.error?.kind == .rejected && tooBig.error?.jetStreamCode == 10054)
        #expect(tooBig.error?.message.contains("message size exceeds maximum") == true)
        let other = outcome(
            #"{"error":{"code":503,"err_code":10008,"description":"JetStream system temporarily unavailable"}}"#
        )
        #expect(other.error?.isRetriable == true && other.error?.jetStreamCode == 10008)
        // A code out of JetStream's range is not believed; a hostile description is cleaned and bounded.
        let hostile = outcome(
            #"{"error":{"err_code":99999999999999999999999,"description":"line\nforged "#
                + String(repeating: "x", count: 5000) + #""}}"#
        )
        #expect(hostile.error?.jetStreamCode == 0 && hostile.error?.isRetriable == true)
        #expect(hostile.error.map { !$0.message.contains("\n") && $0.message.utf8.count < 600 } == true)
        #expect(outcome(#"{"error":"nope"}"#).error?.isRetriable == true)
    }

    @Test func whatIsNotAnAcknowledgementIsARetriableFailure() {
        let hostile = [
            "", " ", "null", "[]", "42", #""stream""#, "{", #"{"stream":"S","seq":1"#, #"{"stream":"S","seq":1}}"#,
            #"{"seq":1}"#, #"{"stream":"S"}"#, #"{"stream":"","seq":1}"#, #"{"stream":7,"seq":1}"#,
            #"{"stream":"S","seq":-1}"#, #"{"stream":"S","seq":1.5}"#, #"{"stream":"S","seq":1e3}"#,
            #"{"stream":"S","seq":18446744073709551616}"#, #"{"stream":"S","seq":99999999999999999999999999}"#,
            #"{"stream":"S","seq":"1"}"#, #"{"stream":"S","seq":01}"#, #"{"stream":"S\u12","seq":1}"#,
            String(repeating: "[", count: 100_000),
            "{\"stream\":\"S\",\"seq\":1,\"pad\":\"" + String(repeating: "a", count: 20_000) + "\"}",
        ]
        for text in hostile { #expect(isUnreadable(outcome(text)), "\(text.prefix(60))") }
        let bytes: [UInt8] = [0x7B, 0xFF, 0xFE, 0x00, 0x7D]
        #expect(isUnreadable(bytes.withUnsafeBytes { JetStreamReply.outcome(payload: $0) }))
        #expect(isUnreadable(JetStreamReply.outcome(payload: UnsafeRawBufferPointer(start: nil, count: 0))))
    }

    /// The acknowledgement read byte by byte (`usualAcknowledgement`) takes only what the JSON scanner reads to the
    /// same acknowledgement: the server's usual text and every one-byte change, deletion and cut of it.
    @Test func theUsualAcknowledgementIsReadAsTheScannerReadsIt() {
        func fast(_ bytes: [UInt8]) -> JetStreamAck? {
            bytes.withUnsafeBytes { JetStreamReply.usualAcknowledgement($0) }
        }
        func scanned(_ bytes: [UInt8]) -> JetStreamOutcome {
            bytes.withUnsafeBytes { JetStreamReply.scannedOutcome(payload: $0) }
        }
        // As nats-server 2.9 writes them, and without its two spaces.
        let usual = [
            #"{"stream":"BENCH", "seq":1}"#, #"{"stream":"BENCH", "seq":907,"duplicate": true}"#,
            #"{"stream":"ORDERS_2","seq":18446744073709551615,"duplicate":true}"#, #"{"stream":"a b/c","seq":25}"#,
        ]
        for text in usual {
            #expect(fast(Array(text.utf8)) != nil && fast(Array(text.utf8)) == scanned(Array(text.utf8)).ack, "\(text)")
        }
        let replacements: [UInt8] = [
            0x00, 0x0A, 0x1F, 0x20, 0x22, 0x30, 0x31, 0x39, 0x2C, 0x5C, 0x7D, 0x7F, 0xC3, 0x61,
        ]
        var taken = 0
        for text in usual {
            let base = Array(text.utf8)
            var variants = (0...base.count).map { Array(base[..<$0]) }
            for index in base.indices {
                variants.append(Array(base[..<index] + base[(index + 1)...]))
                for byte in replacements {
                    var changed = base
                    changed[index] = byte
                    variants.append(changed)
                    variants.append(Array(base[..<index] + [byte] + base[index...]))
                }
            }
            for variant in variants {
                guard let ack = fast(variant) else { continue }
                taken += 1
                #expect(scanned(variant).ack == ack, "\(String(decoding: variant, as: UTF8.self))")
            }
        }
        #expect(taken > 100)
        // Left to the scanner: a zero or leading zero, a sequence past 64 bits, a long name, anything else around.
        for text in [
            #"{"stream":"S","seq":0}"#, #"{"stream":"S","seq":01}"#, #"{"stream":"S","seq":18446744073709551616}"#,
            #"{"stream":""# + String(repeating: "n", count: 257) + #"","seq":1}"#,
            #"{"stream":"S","seq":1,"duplicate":false}"#,
            #"{"stream":"S",  "seq":1}"#, #"{"stream":"S" ,"seq":1}"#, #"{"stream":"S","seq":1} "#,
            #"{"stream":"S", "domain":"hub", "seq":1}"#, #"{"stream":"S", "seq":1,"duplicate":  true}"#,
        ] {
            #expect(fast(Array(text.utf8)) == nil, "\(text)")
        }
    }

    @Test func noRespondersIsRetriable() {
        #expect(JetStreamReply.noResponders.error?.isRetriable == true)
        #expect(JetStreamReply.noResponders.error?.message.contains("no stream took the subject") == true)
    }

    @Test func onlyOurPrefixFollowedByANonZeroDecimalTokenNamesAPublish() {
        #expect(token("_INBOX.abc.1") == 1)
        #expect(token("_INBOX.abc.18446744073709551615") == UInt(UInt64.max))
        for subject in [
            "_INBOX.abc.", "_INBOX.abc.0", "_INBOX.abc.18446744073709551616", "_INBOX.abc.123456789012345678901",
            "_INBOX.abc.-1", "_INBOX.abc.1a", "_INBOX.abc.1.2", "_INBOX.abd.1", "_INBOX.abc", "", "x",
            "_INBOX.ABC.1", "_INBOX.abc.01", "_INBOX.abc.00000000000000000001",
        ] {
            #expect(token(subject) == nil, "\(subject)")
        }
    }
}
