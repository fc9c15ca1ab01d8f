import CCurl

/// The request body and header list one easy handle hands to curl, in buffers that the handle reuses from one
/// transfer to the next: after the first few requests, preparing one allocates nothing.
///
/// curl reads both until the transfer ends (CURLOPT_POSTFIELDS is not copied, and CURLOPT_HTTPHEADER points at
/// `curl_slist` nodes that live here, not in curl's allocator — they are never passed to `curl_slist_free_all`).
/// Owned by one `CurlEasyHandle`; freed in deinit.
final class CurlRequestBuffers {
    private var body: UnsafeMutableRawBufferPointer
    private var lines: UnsafeMutableRawBufferPointer
    private var nodes: UnsafeMutableBufferPointer<curl_slist>

    init() {
        body = .allocate(byteCount: 1024, alignment: 1)
        lines = .allocate(byteCount: 1024, alignment: 1)
        nodes = .allocate(capacity: 16)
    }

    deinit {
        body.deallocate()
        lines.deallocate()
        nodes.deallocate()
    }

    /// Copies `bytes` into the body buffer and returns its start (never NULL, even for an empty body).
    func setBody(_ bytes: [UInt8]) -> UnsafeMutableRawPointer {
        Self.reserve(&body, bytes.count)
        bytes.withUnsafeBytes { Self.copy($0, into: body, at: 0) }
        return body.baseAddress!
    }

    /// Makes `buffer` hold at least `count` bytes (its contents are not kept).
    private static func reserve(_ buffer: inout UnsafeMutableRawBufferPointer, _ count: Int) {
        guard count > buffer.count else { return }
        buffer.deallocate()
        buffer = .allocate(byteCount: max(count, buffer.count * 2), alignment: 1)
    }

    /// Copies `bytes` into `buffer` at `offset` (nothing for an empty source, whose base address may be nil).
    private static func copy(_ bytes: UnsafeRawBufferPointer, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        buffer.baseAddress!.advanced(by: offset).copyMemory(from: source, byteCount: bytes.count)
    }

    /// Renders `headers` as curl header lines (`Name: value`, or `Name;` for an empty value, which curl sends as
    /// an empty header where `Name:` would remove it), followed by the `extra` lines as given; returns the head
    /// of the list, nil for no lines at all.
    func setHeaders(_ headers: [(name: String, value: String)], extra: [StaticString])
        -> UnsafeMutablePointer<curl_slist>?
    {
        guard !headers.isEmpty || !extra.isEmpty else { return nil }
        var size = 0
        for (name, value) in headers { size += name.utf8.count + value.utf8.count + 3 }
        for line in extra { size += line.utf8CodeUnitCount + 1 }
        let count = headers.count + extra.count
        Self.reserve(&lines, size)
        if count > nodes.count {
            nodes.deallocate()
            nodes = .allocate(capacity: max(count, nodes.count * 2))
        }
        var offset = 0
        var index = 0
        func append(_ bytes: UnsafeRawBufferPointer) {
            Self.copy(bytes, into: lines, at: offset)
            offset += bytes.count
        }
        func endLine(startingAt start: Int) {
            lines[offset] = 0
            offset += 1
            let text = lines.baseAddress!.advanced(by: start).assumingMemoryBound(to: CChar.self)
            nodes[index] = curl_slist(data: text, next: nil)
            if index > 0 { nodes[index - 1].next = nodes.baseAddress!.advanced(by: index) }
            index += 1
        }
        for (name, value) in headers {
            let start = offset
            var name = name
            var value = value
            name.withUTF8 { append(UnsafeRawBufferPointer($0)) }
            if value.isEmpty {
                lines[offset] = UInt8(ascii: ";")
                offset += 1
            } else {
                lines[offset] = UInt8(ascii: ":")
                lines[offset + 1] = UInt8(ascii: " ")
                offset += 2
                value.withUTF8 { append(UnsafeRawBufferPointer($0)) }
            }
            endLine(startingAt: start)
        }
        for line in extra {
            let start = offset
            append(UnsafeRawBufferPointer(start: line.utf8Start, count: line.utf8CodeUnitCount))
            endLine(startingAt: start)
        }
        return nodes.baseAddress!
    }
}

@available(*, unavailable)
extension CurlRequestBuffers: Sendable {}
