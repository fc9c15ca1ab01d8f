public import BridgeJSON

/// One item of a REST answer, read in place (docs/ARCHITECTURE.md "Answers read in place"): the bytes it sits in —
/// the answer's body, shared by all its items — and where. Nothing becomes a tree but what is asked for by name.
public struct AnswerItem: Sendable {
    /// The bytes the item sits in.
    public let bytes: [UInt8]
    /// Where the item sits in `bytes`.
    public let range: JSONRange
    /// Whether the item stands in compact form (`JSONRange.isCompact`), as Directus writes every item: then it goes
    /// into event lines as it stands. Another is read through its tree, which gives the same bytes.
    public let isCompact: Bool

    /// The item at `range` of `bytes` (a range the scanner validated in them).
    public init(bytes: [UInt8], range: JSONRange) {
        self.bytes = bytes
        self.range = range
        isCompact = bytes.withUnsafeBytes { range.isCompact(in: $0) }
    }

    /// An item from a tree (fakes and tests): its compact bytes.
    public init(_ value: JSONValue) {
        let bytes = value.serialized()
        self.init(bytes: bytes, range: (try? JSONScanner.validate(bytes)) ?? JSONRange(start: 0, end: 0, kind: .null))
    }

    /// The item as a tree, built at each call.
    public var json: JSONValue { (try? JSONValue.parse(range, in: bytes)) ?? .null }

    /// The value of the member `name` as a tree (a small one: a key, a sort value), nil when absent. Of a repeated
    /// name the last value counts, as in the tree.
    public subscript(name: String) -> JSONValue? {
        guard isCompact else { return json[name] }
        return bytes.withUnsafeBytes { buffer in
            range.member(name, in: buffer).flatMap {
                try? JSONValue.parse(UnsafeRawBufferPointer(rebasing: buffer[$0.offsets]))
            }
        }
    }

    /// The contract's `key` text of the member `name` (`JSONValue.keyString`), nil when absent or not a key.
    public func keyString(_ name: String) -> String? {
        guard isCompact else { return json[name]?.keyString }
        return bytes.withUnsafeBytes { buffer in range.member(name, in: buffer)?.keyString(in: buffer) }
    }

    /// Appends the item's compact JSON to `output` — what `json.serialized()` gives — without the member `omitting`
    /// when that is given and the item is an object.
    public func appendCompact(omitting name: String? = nil, to output: inout [UInt8]) {
        guard isCompact else {
            var value = json
            if let name, case .object(var object) = value {
                object[name] = nil
                value = .object(object)
            }
            value.serialize(into: &output)
            return
        }
        bytes.withUnsafeBytes { buffer in
            if let name {
                range.appendCompact(in: buffer, omitting: name, to: &output)
            } else {
                output.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[range.offsets]))
            }
        }
    }
}

extension DirectusAnswer {
    /// The value at the member path `names` (`"meta", "filter_count"`) as a tree, nil when absent: only that value is
    /// read, the rest of the answer stays bytes.
    public func value(at names: String...) -> JSONValue? {
        body.withUnsafeBytes { buffer in
            var range: JSONRange? = root
            for name in names { range = range?.member(name, in: buffer) }
            return range.flatMap { try? JSONValue.parse(UnsafeRawBufferPointer(rebasing: buffer[$0.offsets])) }
        }
    }

    /// The elements of the answer's `data`, read in place. When they take less than half of the body (an answer padded
    /// with members nobody reads), they are copied out together, so that keeping them does not keep the body.
    public var items: [AnswerItem] {
        let ranges = data
        let used = ranges.reduce(0) { $0 + $1.count }
        guard used < body.count / 2 else { return ranges.map { AnswerItem(bytes: body, range: $0) } }
        var copy: [UInt8] = []
        copy.reserveCapacity(used)
        var moved: [JSONRange] = []
        moved.reserveCapacity(ranges.count)
        for range in ranges {
            moved.append(JSONRange(start: copy.count, end: copy.count + range.count, kind: range.kind))
            copy += body[range.offsets]
        }
        return moved.map { AnswerItem(bytes: copy, range: $0) }
    }
}
