/// Values that travel inside one protocol line — an HTTP header (a token, a header value), a login field, a C string
/// a library takes: CR or LF would end the line and start one the value chose (header injection), NUL would cut the
/// C string where libcurl, libnats or librdkafka read it.
package enum OneLine {
    /// Whether `text` holds CR, LF or NUL. Checked on every header of every request: concrete and inlinable, over
    /// the string's contiguous bytes where it has them (native and small strings: every header the bridge builds),
    /// which costs half as much as stepping through the UTF-8 view.
    @inlinable
    package static func isBroken(_ text: String) -> Bool {
        if let broken = text.utf8.withContiguousStorageIfAvailable({ bytes in
            bytes.contains { $0 <= 0x0D && ($0 == 0x0D || $0 == 0x0A || $0 == 0) }
        }) {
            return broken
        }
        return text.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }
    }
}
