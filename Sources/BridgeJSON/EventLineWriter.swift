import BridgeSystem

/// Writes event lines (contract: "The event line") into one reusable byte buffer.
///
/// Fields are written in the contract's order: `id, type, event, collection, key, data, delta?, origin, seq, time,
/// received_at, subscription, user?`. `data` and `delta` are raw JSON copied byte for byte (the bridge takes them
/// from Directus's validated frames, so they are never re-encoded); the writer trusts them to be valid JSON.
/// A line ends with `\n`; a webhook body is the same object without it.
public struct EventLineWriter: Sendable {
    /// Everything written since the last ``removeAll()``.
    public var bytes: [UInt8]

    /// A writer whose buffer starts with room for `capacity` bytes.
    public init(capacity: Int = 16 * 1024) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Empties the buffer, keeping its storage for the next batch.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
    }

    /// Appends one line (object + `\n`); `data` `nil` writes `null`, `delta` `nil` leaves the field out.
    /// Returns where the line sits in ``bytes``.
    @discardableResult
    public mutating func appendLine(
        _ fields: EventLineFields, data: UnsafeRawBufferPointer?, delta: UnsafeRawBufferPointer? = nil
    ) -> Range<Int> {
        let start = bytes.count
        Self.append(fields, data: data, delta: delta, newline: true, to: &bytes)
        return start..<bytes.count
    }

    /// Appends one line whose `data`/`delta` are ranges of `source` (e.g. items of a decoded frame).
    @discardableResult
    public mutating func appendLine(
        _ fields: EventLineFields, data: JSONRange?, delta: JSONRange? = nil, in source: [UInt8]
    ) -> Range<Int> {
        let start = bytes.count
        Self.append(fields, data: data, delta: delta, in: source, newline: true, to: &bytes)
        return start..<bytes.count
    }

    /// Appends one line whose `data`/`delta` are DOM values (off the hot path: snapshots, backfill).
    @discardableResult
    public mutating func appendLine(_ fields: EventLineFields, data: JSONValue?, delta: JSONValue? = nil) -> Range<Int>
    {
        let start = bytes.count
        Self.append(fields, data: data, delta: delta, newline: true, to: &bytes)
        return start..<bytes.count
    }

    // MARK: - Static forms (any buffer; `newline: false` gives a webhook body)

    /// Appends one event object to `output`, followed by `\n` when `newline` is true.
    public static func append(
        _ fields: EventLineFields, data: UnsafeRawBufferPointer?, delta: UnsafeRawBufferPointer?, newline: Bool,
        to output: inout [UInt8]
    ) {
        let estimate = 320 + (data?.count ?? 4) + (delta?.count ?? 0) + fields.id.utf8.count
            + fields.collection.utf8.count + fields.key.utf8.count + fields.subscription.utf8.count
        if output.capacity - output.count < estimate {
            // Grow geometrically: reserving exactly what each line needs would copy the buffer every time.
            output.reserveCapacity(max(output.count + estimate, output.capacity * 2))
        }
        JSONOutput.appendLiteral("{\"id\":", to: &output)
        JSONOutput.appendQuoted(fields.id, to: &output)
        switch fields.event {
        case .create: JSONOutput.appendLiteral(",\"type\":\"directus.items.create\",\"event\":\"create\"", to: &output)
        case .update: JSONOutput.appendLiteral(",\"type\":\"directus.items.update\",\"event\":\"update\"", to: &output)
        case .delete: JSONOutput.appendLiteral(",\"type\":\"directus.items.delete\",\"event\":\"delete\"", to: &output)
        case .snapshot:
            JSONOutput.appendLiteral(",\"type\":\"directus.items.snapshot\",\"event\":\"snapshot\"", to: &output)
        }
        JSONOutput.appendLiteral(",\"collection\":", to: &output)
        JSONOutput.appendQuoted(fields.collection, to: &output)
        JSONOutput.appendLiteral(",\"key\":", to: &output)
        JSONOutput.appendQuoted(fields.key, to: &output)
        JSONOutput.appendLiteral(",\"data\":", to: &output)
        if let data, data.count > 0 {
            JSONOutput.appendRaw(data, to: &output)
        } else {
            JSONOutput.appendLiteral("null", to: &output)
        }
        if let delta, delta.count > 0 {
            JSONOutput.appendLiteral(",\"delta\":", to: &output)
            JSONOutput.appendRaw(delta, to: &output)
        }
        switch fields.origin {
        case .live: JSONOutput.appendLiteral(",\"origin\":\"live\",\"seq\":", to: &output)
        case .backfill: JSONOutput.appendLiteral(",\"origin\":\"backfill\",\"seq\":", to: &output)
        case .snapshot: JSONOutput.appendLiteral(",\"origin\":\"snapshot\",\"seq\":", to: &output)
        }
        if let seq = fields.seq {
            JSONOutput.appendDecimal(seq, to: &output)
        } else {
            JSONOutput.appendLiteral("null", to: &output)
        }
        JSONOutput.appendLiteral(",\"time\":\"", to: &output)
        JSONOutput.appendRFC3339(fields.time, to: &output)
        JSONOutput.appendLiteral("\",\"received_at\":\"", to: &output)
        JSONOutput.appendRFC3339(fields.receivedAt, to: &output)
        JSONOutput.appendLiteral("\",\"subscription\":", to: &output)
        JSONOutput.appendQuoted(fields.subscription, to: &output)
        if let user = fields.user {
            JSONOutput.appendLiteral(",\"user\":", to: &output)
            JSONOutput.appendQuoted(user, to: &output)
        }
        if newline {
            JSONOutput.appendLiteral("}\n", to: &output)
        } else {
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Appends one event object whose `data`/`delta` are ranges of `source`. A range that does not fit `source`
    /// is written as `null` (data) or left out (delta) rather than read out of bounds.
    public static func append(
        _ fields: EventLineFields, data: JSONRange?, delta: JSONRange?, in source: [UInt8], newline: Bool,
        to output: inout [UInt8]
    ) {
        source.withUnsafeBytes { buffer in
            append(
                fields, data: data.flatMap { slice($0, of: buffer) }, delta: delta.flatMap { slice($0, of: buffer) },
                newline: newline, to: &output)
        }
    }

    /// Appends one event object whose `data`/`delta` are DOM values, serialised compactly.
    public static func append(
        _ fields: EventLineFields, data: JSONValue?, delta: JSONValue?, newline: Bool, to output: inout [UInt8]
    ) {
        let dataBytes = data?.serialized()
        let deltaBytes = delta?.serialized()
        dataBytes.withUnsafeBytesIfPresent { dataBuffer in
            deltaBytes.withUnsafeBytesIfPresent { deltaBuffer in
                append(fields, data: dataBuffer, delta: deltaBuffer, newline: newline, to: &output)
            }
        }
    }

    /// The bytes of `range` in `buffer`, or `nil` when it does not fit.
    private static func slice(_ range: JSONRange, of buffer: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard range.fits(buffer.count), range.count > 0 else { return nil }
        return UnsafeRawBufferPointer(rebasing: buffer[range.start..<range.end])
    }
}

extension Optional where Wrapped == [UInt8] {
    /// Lends the bytes when present, `nil` otherwise.
    fileprivate func withUnsafeBytesIfPresent<R>(_ body: (UnsafeRawBufferPointer?) -> R) -> R {
        switch self {
        case .some(let bytes): return bytes.withUnsafeBytes { body($0) }
        case .none: return body(nil)
        }
    }
}
