import BridgeSystem

/// Writes event lines (README.md "The event line") into one reusable byte buffer.
///
/// Fields are written in the contract's order: `id, type, event, collection, key, data, delta?, origin, seq, time,
/// received_at, subscription, user?`. `data` and `delta` are raw JSON copied byte for byte (the bridge takes them
/// from Directus's validated frames, so they are never re-encoded); the writer trusts them to be valid JSON and
/// only turns line breaks between tokens into spaces, so a line is always one line.
/// A line ends with `\n`; a webhook body is the same object without it.
public struct EventLineWriter: Sendable {
    /// Everything written since the last ``removeAll()``.
    public var bytes: [UInt8]
    /// The text of the last `time` written from frame ranges (a batch's lines mostly share one).
    private var timeMemo = RFC3339Memo()

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
        _ fields: borrowing EventLineFields,
        data: UnsafeRawBufferPointer?,
        delta: UnsafeRawBufferPointer? = nil
    ) -> Range<Int> {
        let start = bytes.count
        Self.append(fields, data: data, delta: delta, newline: true, to: &bytes)
        return start..<bytes.count
    }

    /// Appends one line whose `data`/`delta` are ranges of `source` (e.g. items of a decoded frame).
    @discardableResult
    public mutating func appendLine(
        _ fields: borrowing EventLineFields,
        data: JSONRange?,
        delta: JSONRange? = nil,
        in source: [UInt8]
    ) -> Range<Int> {
        let start = bytes.count
        Self.append(fields, data: data, delta: delta, in: source, newline: true, timeMemo: &timeMemo, to: &bytes)
        return start..<bytes.count
    }

    /// Appends one line whose `data`/`delta` are DOM values (off the hot path: snapshots, backfill);
    /// `nil` data is written as `null`, `nil` delta is left out.
    @discardableResult
    public mutating func appendLine(
        _ fields: borrowing EventLineFields,
        dataValue: JSONValue?,
        deltaValue: JSONValue? = nil
    ) -> Range<Int> {
        let start = bytes.count
        Self.append(fields, dataValue: dataValue, deltaValue: deltaValue, newline: true, to: &bytes)
        return start..<bytes.count
    }

    // MARK: - Static forms (any buffer; `newline: false` gives a webhook body)

    /// Appends one event object to `output`, followed by `\n` when `newline` is true.
    public static func append(
        _ fields: borrowing EventLineFields,
        data: UnsafeRawBufferPointer?,
        delta: UnsafeRawBufferPointer?,
        newline: Bool,
        to output: inout [UInt8]
    ) {
        append(fields, data: data, delta: delta, newline: newline, timeMemo: nil, to: &output)
    }

    /// The raw-bytes `append`, with the text of the last `time` written when the caller keeps one.
    private static func append(
        _ fields: borrowing EventLineFields,
        data: UnsafeRawBufferPointer?,
        delta: UnsafeRawBufferPointer?,
        newline: Bool,
        timeMemo: UnsafeMutablePointer<RFC3339Memo>?,
        to output: inout [UInt8]
    ) {
        // An upper bound of the line: fixed text, strings escaped at worst, raw JSON as is.
        let user = fields.user?.utf8.count ?? 0
        let strings =
            fields.identifier.utf8Count + fields.collection.utf8.count + fields.key.utf8.count
            + fields.subscription.utf8.count + user
        let bound = 300 + ByteCursor.quotedBound(strings) + (data?.count ?? 0) + (delta?.count ?? 0)
        // The closure gets the fields through a pointer: captured as a value they were copied for every line (five
        // strings retained and released; retains and releases were a tenth of json-hot-path's time in perf record).
        withUnsafePointer(to: fields) { fields in
            output.appendWriting(bound: bound) { cursor in
                write(fields, data: data, delta: delta, newline: newline, timeMemo: timeMemo, to: &cursor)
            }
        }
    }

    /// Writes the event object; the bound computed by the raw-bytes `append(_:data:delta:newline:to:)`
    /// covers everything written here (fixed text of at most 300 bytes with both timestamps and `seq`).
    private static func write(
        _ fields: UnsafePointer<EventLineFields>,
        data: UnsafeRawBufferPointer?,
        delta: UnsafeRawBufferPointer?,
        newline: Bool,
        timeMemo: UnsafeMutablePointer<RFC3339Memo>?,
        to cursor: inout ByteCursor
    ) {
        cursor.write("{\"id\":")
        cursor.writeQuoted(fields.pointee.identifier)
        switch fields.pointee.event {
        case .create: cursor.write(",\"type\":\"directus.items.create\",\"event\":\"create\"")
        case .update: cursor.write(",\"type\":\"directus.items.update\",\"event\":\"update\"")
        case .delete: cursor.write(",\"type\":\"directus.items.delete\",\"event\":\"delete\"")
        case .snapshot: cursor.write(",\"type\":\"directus.items.snapshot\",\"event\":\"snapshot\"")
        }
        cursor.write(",\"collection\":")
        cursor.writeQuoted(fields.pointee.collection)
        cursor.write(",\"key\":")
        cursor.writeQuoted(fields.pointee.key)
        cursor.write(",\"data\":")
        if let data, data.count > 0 {
            cursor.write(rawJSON: data)
        } else {
            cursor.write("null")
        }
        if let delta, delta.count > 0 {
            cursor.write(",\"delta\":")
            cursor.write(rawJSON: delta)
        }
        switch fields.pointee.origin {
        case .live: cursor.write(",\"origin\":\"live\",\"seq\":")
        case .backfill: cursor.write(",\"origin\":\"backfill\",\"seq\":")
        case .snapshot: cursor.write(",\"origin\":\"snapshot\",\"seq\":")
        }
        if let seq = fields.pointee.seq {
            cursor.writeDecimal(seq)
        } else {
            cursor.write("null")
        }
        cursor.write(",\"time\":\"")
        let timeText = UnsafePointer(cursor.pointer)
        if let timeMemo {
            cursor.writeRFC3339(fields.pointee.time, memo: &timeMemo.pointee)
        } else {
            cursor.writeRFC3339(fields.pointee.time)
        }
        cursor.write("\",\"received_at\":\"")
        cursor.writeRFC3339(fields.pointee.receivedAt, sameSecondAs: (timeText, fields.pointee.time))
        cursor.write("\",\"subscription\":")
        cursor.writeQuoted(fields.pointee.subscription)
        if let user = fields.pointee.user {
            cursor.write(",\"user\":")
            cursor.writeQuoted(user)
        }
        cursor.write(newline ? "}\n" : "}")
    }

    /// Appends one event object whose `data`/`delta` are ranges of `source`. A range that does not fit `source`
    /// is written as `null` (data) or left out (delta) rather than read out of bounds. `timeMemo` keeps the text of
    /// the last `time` written, for a caller writing many lines of one time (a socket read's events share their
    /// receipt time): the date and clock are formatted once, not once per line (`writeRFC3339` was 5 % of the
    /// socket reader's CPU in perf record).
    public static func append(
        _ fields: borrowing EventLineFields,
        data: JSONRange?,
        delta: JSONRange?,
        in source: [UInt8],
        newline: Bool,
        timeMemo: inout RFC3339Memo,
        to output: inout [UInt8]
    ) {
        withUnsafePointer(to: fields) { fields in  // not captured as a value: see the raw-bytes `append`
            withUnsafeMutablePointer(to: &timeMemo) { timeMemo in
                source.withUnsafeBytes { buffer in
                    append(
                        fields,
                        data: data,
                        delta: delta,
                        in: buffer,
                        newline: newline,
                        timeMemo: timeMemo,
                        to: &output
                    )
                }
            }
        }
    }

    /// `append(_:data:delta:in:newline:timeMemo:to:)` with `source` in any memory (the socket reader's frames are
    /// read where they lie in the connection's read buffer).
    public static func append(
        _ fields: borrowing EventLineFields,
        data: JSONRange?,
        delta: JSONRange?,
        in source: UnsafeRawBufferPointer,
        newline: Bool,
        timeMemo: inout RFC3339Memo,
        to output: inout [UInt8]
    ) {
        withUnsafePointer(to: fields) { fields in
            withUnsafeMutablePointer(to: &timeMemo) { timeMemo in
                append(fields, data: data, delta: delta, in: source, newline: newline, timeMemo: timeMemo, to: &output)
            }
        }
    }

    /// The two forms above, with the fields and the memo already lent: one level of pointers, not two (a second
    /// `withUnsafePointer(to:)` of the fields copied them, 3 % of json-hot-path's time per line).
    private static func append(
        _ fields: UnsafePointer<EventLineFields>,
        data: JSONRange?,
        delta: JSONRange?,
        in source: UnsafeRawBufferPointer,
        newline: Bool,
        timeMemo: UnsafeMutablePointer<RFC3339Memo>,
        to output: inout [UInt8]
    ) {
        append(
            fields.pointee,
            data: data.flatMap { slice($0, of: source) },
            delta: delta.flatMap { slice($0, of: source) },
            newline: newline,
            timeMemo: timeMemo,
            to: &output
        )
    }

    /// Appends one event object whose `data`/`delta` are DOM values, serialised compactly.
    public static func append(
        _ fields: borrowing EventLineFields,
        dataValue: JSONValue?,
        deltaValue: JSONValue?,
        newline: Bool,
        to output: inout [UInt8]
    ) {
        append(fields, data: dataValue?.serialized() ?? [], deltaValue: deltaValue, newline: newline, to: &output)
    }

    /// Appends one event object whose `data` is compact JSON (empty: `null`), e.g. a REST item written from its
    /// answer's bytes, and whose `delta` is a DOM value (nil: left out).
    public static func append(
        _ fields: borrowing EventLineFields,
        data: [UInt8],
        deltaValue: JSONValue?,
        newline: Bool,
        to output: inout [UInt8]
    ) {
        let deltaBytes = deltaValue?.serialized()
        data.withUnsafeBytes { dataBuffer in
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
