internal import BridgeTLS
internal import BridgeEvents

/// How a sink is named in the state directory (its cursor, its outbox rows) and in metric labels.
package enum SinkIdentity {
    /// `<index>-<type>-<8 hex digits of a keyed hash of target>`: stable while the entry keeps its position and
    /// target, and free of the target's text (a URL's path and query may carry a token).
    package static func id(index: Int, type: String, target: String) -> String {
        "\(index)-\(type)-\(hash(target))"
    }

    /// 8 hex digits of HMAC-SHA256 of `text` under a fixed key.
    package static func hash(_ text: String) -> String {
        let digest = HMACSHA256(key: Array("directus-bridge webhook sink".utf8)).authenticationCode(Array(text.utf8))
        return digest.prefix(4).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
