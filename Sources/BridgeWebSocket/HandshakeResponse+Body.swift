extension HandshakeResponse {
    /// How much of a rejected handshake's body is kept for the error.
    package static let bodyPrefixLimit = 512
    /// How many body bytes are read at most: a body whose framing never yields `bodyPrefixLimit` bytes (an endless
    /// chunk-size line, chunk extensions, a huge `Content-Length` that is never sent) is not read further.
    package static let maximumBodyRead = 16 << 10

    /// The first `bodyPrefixLimit` bytes of the body from `raw` (the bytes after the head, as read so far),
    /// de-chunked when the response is chunked, and whether reading more would not change them (or is not worth
    /// it: `raw` holds `maximumBodyRead` bytes). A `Content-Length` that is not one non-negative decimal number
    /// (negative, garbage, several different values) frames nothing: the body then runs to the end of the
    /// connection.
    package func bodyPrefix(_ raw: ArraySlice<UInt8>) -> (prefix: [UInt8], isComplete: Bool) {
        let limit = Self.bodyPrefixLimit
        let readEnough = raw.count >= Self.maximumBodyRead
        if status == 204 || status == 304 || (100...199).contains(status) { return ([], true) }
        if tokens("Transfer-Encoding").contains("chunked") {
            let (decoded, sawLastChunk) = Self.dechunk(raw, limit: limit)
            return (decoded, sawLastChunk || decoded.count >= limit || readEnough)
        }
        if let length = contentLength {
            let wanted = min(length, limit)
            return (Array(raw.prefix(wanted)), raw.count >= wanted)
        }
        // No framing: the body runs to the end of the connection.
        return (Array(raw.prefix(limit)), raw.count >= limit)
    }

    /// The `Content-Length`, when every such header holds the same run of ASCII digits (saturated at `Int.max`).
    private var contentLength: Int? {
        let values = Set(headers.filter { $0.name.lowercased() == "content-length" }.map(\.value))
        guard values.count == 1, let text = values.first, !text.isEmpty,
            text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return Int(text) ?? .max
    }

    /// Decodes as much of a chunked body as `raw` holds, up to `limit` bytes; reports whether the last
    /// (zero-size) chunk was seen.
    private static func dechunk(_ raw: ArraySlice<UInt8>, limit: Int) -> ([UInt8], Bool) {
        var output: [UInt8] = []
        var index = raw.startIndex
        while output.count < limit {
            guard let lineEnd = raw[index...].firstIndex(of: 0x0A) else { break }
            let sizeText =
                String(decoding: raw[index..<lineEnd], as: UTF8.self)
                .split(separator: ";").first.map { $0.trimmingCharacters(in: " \t\r") } ?? ""
            // A size beyond Int (or negative, or not hex) ends the prefix here; `available` bounds the copy.
            guard let size = Int(sizeText, radix: 16), size >= 0 else { break }
            if size == 0 { return (output, true) }
            let dataStart = lineEnd + 1
            let available = min(size, raw.endIndex - dataStart)
            output += raw[dataStart..<(dataStart + available)]
            if available < size { break }
            index = dataStart + size
            // Skip the CRLF after the chunk data.
            while index < raw.endIndex && (raw[index] == 0x0D || raw[index] == 0x0A) { index += 1 }
        }
        return (Array(output.prefix(limit)), false)
    }
}
