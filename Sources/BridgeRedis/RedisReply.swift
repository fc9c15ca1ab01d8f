/// One Redis reply (RESP2), copied out of hiredis's parser into Swift values.
package enum RedisReply: Sendable, Equatable {
    /// `+OK`: a status line.
    case status(String)
    /// `-ERR …`: an error line (the command failed; the connection is fine).
    case error(String)
    /// `:42`.
    case integer(Int64)
    /// `$n`: a bulk string.
    case bulk([UInt8])
    /// `$-1` or `*-1`: no value.
    case null
    /// `*n`: an array of replies.
    indirect case array([RedisReply])

    /// The text of a status or bulk reply (bulk bytes that are not UTF-8 give nil).
    package var text: String? {
        switch self {
        case .status(let text): text
        case .bulk(let bytes): String(validating: bytes, as: UTF8.self)
        default: nil
        }
    }
}
