// Validating skip over one whole value, iteratively: a hostile peer's `[[[[…` must give an error, not overflow the
// thread's stack, and a loop with an explicit bit stack is also faster than recursion for the shallow items Directus
// sends.
extension JSONScanner {
    /// Skips leading whitespace, then validates and skips one complete value. `depth` is how many objects/arrays
    /// already enclose the value (so the nesting limit counts from the top of the document).
    /// Returns the value's range; `index` is left just after it.
    public mutating func skipValue(depth: Int = 0) throws(JSONSyntaxError) -> JSONRange {
        skipWhitespace()
        guard index < count else { throw JSONSyntaxError(.unexpectedEnd, at: index) }
        let start = index
        let first = base[index]
        switch first {
        case UInt8(ascii: "\""):
            _ = try scanString()
            return JSONRange(start: start, end: index, kind: .string)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try scanNumber()
            return JSONRange(start: start, end: index, kind: .number)
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            let kind = try scanLiteral()
            return JSONRange(start: start, end: index, kind: kind)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            try skipContainer(depth: depth)
            return JSONRange(start: start, end: index, kind: first == UInt8(ascii: "{") ? .object : .array)
        default:
            throw JSONSyntaxError(.unexpectedByte(first), at: index)
        }
    }

    /// Validates and skips the object whose `{` is at `index` as ``skipValue(depth:)`` does (the same range, the same
    /// error at the same offset), and notes its first member on the way: the event path reads an item's primary key
    /// from it, which Directus sends first, instead of scanning the item for it again.
    public mutating func skipObjectNotingFirstMember(
        depth: Int
    ) throws(JSONSyntaxError) -> (object: JSONRange, first: JSONFirstMember?) {
        let start = index
        // The checks of `skipContainer`, in its order, up to the end of the first member's value.
        guard maxDepth - max(depth, 0) >= 1 else { throw JSONSyntaxError(.nestingTooDeep, at: index) }
        index &+= 1
        skipWhitespace()
        guard index < count else { throw JSONSyntaxError(.unexpectedEnd, at: index) }
        if base[index] == UInt8(ascii: "}") {
            index &+= 1
            return (JSONRange(start: start, end: index, kind: .object), nil)
        }
        guard base[index] == UInt8(ascii: "\"") else { throw JSONSyntaxError(.unexpectedByte(base[index]), at: index) }
        let nameStart = index
        let nameHasEscapes = try scanString()
        let name = JSONRange(start: nameStart, end: index, kind: .string)
        skipWhitespace()
        try expect(UInt8(ascii: ":"))
        skipWhitespace()
        guard index < count else { throw JSONSyntaxError(.unexpectedEnd, at: index) }
        let valueStart = index
        let value: JSONRange
        let valueIsPlainKey: Bool
        switch base[index] {
        case UInt8(ascii: "\""):
            valueIsPlainKey = !(try scanString())
            value = JSONRange(start: valueStart, end: index, kind: .string)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            valueIsPlainKey = try scanNumber()
            value = JSONRange(start: valueStart, end: index, kind: .number)
        default:
            // A literal or a container one level down: the loop's own checks, and its nesting limit, in `skipValue`.
            value = try skipValue(depth: depth &+ 1)
            valueIsPlainKey = false
        }
        try skipContainer(depth: depth, resumingAfterFirstMember: true)
        let first = JSONFirstMember(
            objectStart: start,
            name: name,
            nameHasEscapes: nameHasEscapes,
            value: value,
            valueIsPlainKey: valueIsPlainKey
        )
        return (JSONRange(start: start, end: index, kind: .object), first)
    }

    /// Skips an object or array whose opening bracket is at `index`, or, `resumingAfterFirstMember`, the rest of an
    /// object whose first member ends at `index`.
    private mutating func skipContainer(
        depth outerDepth: Int,
        resumingAfterFirstMember: Bool = false
    ) throws(JSONSyntaxError) {
        // Bit n of `isObject` says whether the container at relative level n is an object.
        var isObject = InlineArray<8, UInt64>(repeating: 0)
        var level = 0
        let allowed = maxDepth - max(outerDepth, 0)  // how many levels may open from here (≤ 512 bits)
        guard allowed >= 1 else { throw JSONSyntaxError(.nestingTooDeep, at: index) }

        func top(_ bits: borrowing InlineArray<8, UInt64>, _ level: Int) -> Bool {
            bits[(level &- 1) &>> 6] & (1 &<< UInt64((level &- 1) & 63)) != 0
        }

        // Open the first container. Whether the innermost container is an object is also kept in a local, read at
        // every value (from the bit stack it was a load, a shift and a mask per value); the stack is read only when a
        // container closes.
        var inObject = resumingAfterFirstMember || base[index] == UInt8(ascii: "{")
        if inObject { isObject[0] = 1 }
        level = 1
        if !resumingAfterFirstMember { index &+= 1 }
        var justOpened = !resumingAfterFirstMember

        while true {
            skipWhitespace()
            guard index < count else { throw JSONSyntaxError(.unexpectedEnd, at: index) }
            var byte = base[index]
            // After a value: `,` continues, the matching bracket closes. Right after opening: the bracket closes.
            if byte == (inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                index &+= 1
                level &-= 1
                if level == 0 { return }
                inObject = top(isObject, level)
                justOpened = false
                continue
            }
            if !justOpened {
                guard byte == UInt8(ascii: ",") else { throw JSONSyntaxError(.unexpectedByte(byte), at: index) }
                index &+= 1
                skipWhitespace()
                guard index < count else { throw JSONSyntaxError(.unexpectedEnd, at: index) }
                byte = base[index]
            }
            if inObject {
                guard byte == UInt8(ascii: "\"") else { throw JSONSyntaxError(.unexpectedByte(byte), at: index) }
                _ = try scanString()
                skipWhitespace()
                try expect(UInt8(ascii: ":"))
                skipWhitespace()
                guard index < count else { throw JSONSyntaxError(.unexpectedEnd, at: index) }
                byte = base[index]
            }
            switch byte {
            case UInt8(ascii: "\""):
                _ = try scanString()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                try scanNumber()
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                _ = try scanLiteral()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard level < allowed else { throw JSONSyntaxError(.nestingTooDeep, at: index) }
                let word = level &>> 6
                let bit: UInt64 = 1 &<< UInt64(level & 63)
                inObject = byte == UInt8(ascii: "{")
                if inObject { isObject[word] |= bit } else { isObject[word] &= ~bit }
                level &+= 1
                index &+= 1
                justOpened = true
                continue
            default:
                throw JSONSyntaxError(.unexpectedByte(byte), at: index)
            }
            justOpened = false
        }
    }
}
