internal import BridgeSystem
internal import BridgeTLS

/// The dedup window's script: appends an entry unless its id was appended to the same stream within the window.
///
/// Run atomically by the server (EVALSHA): `GET` the dedup key; if it is there, the entry was appended before and
/// its entry id is returned (`{0, id}`); otherwise `XADD` (with `MAXLEN ~ N` when trimming), then `SET dedupkey
/// <entry id> EX window`, and `{1, id}`. The key is set only after `XADD` succeeded: Redis does not roll a
/// script back, so a `SET … NX` first would leave the id marked as seen when `XADD` then fails (the key holds
/// another type), and a later retry would be dropped as a duplicate although nothing was appended.
///
/// KEYS[1] the stream, KEYS[2] the dedup key; ARGV[1] the window in seconds, ARGV[2] MAXLEN (0: none), then the
/// fields and values. Both keys are named in KEYS, as Redis requires of scripts; they are not in one hash slot,
/// which is one reason Cluster is not supported. (`package` for the `redis-sink` benchmark, whose peers load this
/// same script.)
package enum RedisDedupScript {
    package static let source = """
        local seen = redis.call('GET', KEYS[2])
        if seen then return {0, seen} end
        local id
        if ARGV[2] ~= '0' then
          id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', unpack(ARGV, 3))
        else
          id = redis.call('XADD', KEYS[1], '*', unpack(ARGV, 3))
        end
        redis.call('SET', KEYS[2], id, 'EX', ARGV[1])
        return {1, id}
        """

    /// The script's SHA-1 in lower-case hex, as `SCRIPT LOAD` answers and `EVALSHA` takes it.
    package static let sha1: String = {
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        for byte in Crypto.sha1(Array(source.utf8)) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }()

    /// The outcome the script's reply stands for; a reply of any other shape is a protocol violation.
    static func outcome(of reply: RedisReply) throws(RedisError) -> RedisStreamOutcome {
        guard case .array(let parts) = reply, parts.count == 2, case .integer(let appended) = parts[0],
            appended == 0 || appended == 1, let id = parts[1].text, RedisEntryID.isValid(id)
        else {
            throw RedisError(
                kind: .protocolViolation,
                message: "the dedup script answered \(RedisEntryID.shown(reply))"
            )
        }
        return appended == 1 ? .appended(id) : .duplicate(id)
    }
}

/// Stream entry ids: `<milliseconds>-<sequence>`, two decimal numbers of at most 20 digits.
enum RedisEntryID {
    /// Whether `text` has the shape of an entry id.
    static func isValid(_ text: String) -> Bool {
        let parts = text.utf8.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        return parts.count == 2
            && parts.allSatisfy { !$0.isEmpty && $0.count <= 20 && $0.allSatisfy { (48...57).contains($0) } }
    }

    /// A reply for an error message: its kind and at most 80 characters.
    static func shown(_ reply: RedisReply) -> String {
        PeerText.sanitized(String(String(describing: reply).prefix(80)))
    }
}
