/// The ranges of a JSON array's elements, the first one held inline.
///
/// A live frame nearly always carries one item (`"data":[{…}]`): with the first range inline its decoding allocates
/// no array, where a `[JSONRange]` was one heap allocation and one free per frame on the socket reader's thread.
/// Frames of several items keep the rest in an array as before.
public struct JSONRangeList: RandomAccessCollection, Sendable, Hashable, ExpressibleByArrayLiteral {
    /// Element 0, nil when the list is empty.
    private var head: JSONRange?
    /// Elements 1 and later (empty unless `head` is set).
    private var tail: [JSONRange] = []

    /// An empty list.
    public init() {}

    /// The list of `elements`, in order.
    public init(arrayLiteral elements: JSONRange...) {
        for element in elements { append(element) }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { head == nil ? 0 : 1 &+ tail.count }

    public subscript(position: Int) -> JSONRange {
        precondition(position >= 0 && position < endIndex, "JSONRangeList index out of range")
        // `head` is set whenever the position is in range.
        return position == 0 ? head.unsafelyUnwrapped : tail[position &- 1]
    }

    /// Adds `range` at the end.
    public mutating func append(_ range: JSONRange) {
        if head == nil {
            head = range
        } else {
            tail.append(range)
        }
    }
}
