public import BridgeSystem

/// Writes a CloudEvents 1.0 JSON object in structured mode around an event object (docs/configuration.md,
/// "Output format"): `specversion`, `id`, `source`, `type`, `subject` (`<collection>/<key>`), `time`,
/// `datacontenttype` and `data`, the event object copied byte for byte.
///
/// The event object is never re-encoded: it was written once where the event was born (``EventLineWriter``), and
/// the envelope only wraps those bytes.
public struct CloudEventWriter: Sendable {
    /// `,"source":"<source>"`, written once: the source is the same for every event of a sink.
    private let sourceField: [UInt8]

    /// A writer whose events name `source` (the Directus URL) as their `source`.
    public init(source: String) {
        var field: [UInt8] = Array(#","source":"#.utf8)
        JSONOutput.appendQuoted(source, to: &field)
        sourceField = field
    }

    /// Appends the envelope of the event object `data` (valid JSON, one object) to `output`.
    public func append(
        id: String, type: String, subject: String, time: Timestamp, data: ArraySlice<UInt8>, to output: inout [UInt8]
    ) {
        let bound =
            160 + ByteCursor.quotedBound(id.utf8.count) + ByteCursor.quotedBound(type.utf8.count)
            + ByteCursor.quotedBound(subject.utf8.count) + sourceField.count
        output.appendWriting(bound: bound) { cursor in
            cursor.write(#"{"specversion":"1.0","id":"#)
            cursor.writeQuoted(id)
            sourceField.withUnsafeBytes { cursor.write(raw: $0) }
            cursor.write(#","type":"#)
            cursor.writeQuoted(type)
            cursor.write(#","subject":"#)
            cursor.writeQuoted(subject)
            cursor.write(#","time":""#)
            cursor.writeRFC3339(time)
            cursor.write(#"","datacontenttype":"application/json","data":"#)
        }
        // The event object is copied straight into `output`: it can be megabytes, too much for a scratch copy.
        output.append(contentsOf: data)
        output.append(UInt8(ascii: "}"))
    }

    /// The `subject` of an item's event: `<collection>/<key>`.
    public static func subject(collection: String, key: String) -> String { collection + "/" + key }
}
