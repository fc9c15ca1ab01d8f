/// Values that travel inside one protocol line — an HTTP header (a token, a header value), a login field, a C string
/// a library takes: CR or LF would end the line and start one the value chose (header injection), NUL would cut the
/// C string where libcurl, libnats or librdkafka read it.
package enum OneLine {
    /// Whether `text` holds CR, LF or NUL.
    package static func isBroken(_ text: some StringProtocol) -> Bool {
        text.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }
    }
}
