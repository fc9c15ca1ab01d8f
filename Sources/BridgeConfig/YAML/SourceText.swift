/// The configuration text as Unicode scalars with a line table, so that offsets (as libyaml counts them)
/// turn into the 1-based line and column a person sees.
package struct SourceText: Sendable {
    /// The text, one element per Unicode scalar.
    package let scalars: [Unicode.Scalar]
    /// Offsets where each line starts (the first is 0).
    private let lineStarts: [Int]

    /// Indexes `text`. Line breaks are those of YAML 1.1 (what libyaml uses): LF, CR LF, CR, NEL, LS and PS.
    package init(_ text: String) {
        let scalars = Array(text.unicodeScalars)
        var starts = [0]
        var index = 0
        while index < scalars.count {
            switch scalars[index].value {
            case 0x0D:
                if index + 1 < scalars.count, scalars[index + 1].value == 0x0A { index += 1 }
                starts.append(index + 1)
            case 0x0A, 0x85, 0x2028, 0x2029:
                starts.append(index + 1)
            default:
                break
            }
            index += 1
        }
        self.scalars = scalars
        self.lineStarts = starts
    }

    /// The mark for a 0-based scalar offset.
    package func mark(at index: Int) -> SourceMark {
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if lineStarts[middle] <= index { low = middle } else { high = middle - 1 }
        }
        return SourceMark(line: low + 1, column: index - lineStarts[low] + 1, index: index)
    }

    /// The mark of the first byte of `bytes` that is not valid UTF-8, or nil when all of it is valid.
    package static func firstInvalidUTF8(in bytes: [UInt8]) -> SourceMark? {
        var line = 1
        var column = 1
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                if scalar == "\n" {
                    line += 1
                    column = 1
                } else {
                    column += 1
                }
                offset += 1
            case .emptyInput:
                return nil
            case .error:
                return SourceMark(line: line, column: column, index: offset)
            }
        }
    }
}
