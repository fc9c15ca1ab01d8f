/// Replaces `${NAME}` and `${NAME:-default}` inside scalar values with values from an environment dictionary.
///
/// It runs on each scalar after libyaml has parsed it, never on the raw text, so a variable's value can never
/// change the structure of the file (a value containing `: ` or a newline stays one string). `$$` stands for a
/// literal `$` (so `$${NAME}` is the text `${NAME}`); any other `$` is kept as written. Keys are not interpolated.
package struct Interpolator: Sendable {
    /// Where a reference went wrong.
    package struct Problem: Sendable, Equatable {
        /// The position of the `${` (or the scalar's start when it cannot be located in the source).
        package var mark: SourceMark
        /// The message.
        package var message: String
        /// Whether the reference names a variable the environment does not define (rather than being malformed).
        package var isUndefinedVariable = false
    }

    private let environment: [String: String]
    private let source: SourceText

    /// An interpolator reading variables from `environment`, locating references in `source`.
    package init(environment: [String: String], source: SourceText) {
        self.environment = environment
        self.source = source
    }

    /// Interpolates `scalar` (which starts at `mark`) in place; returns the problems, and on any problem marks
    /// the scalar as already reported.
    package func interpolate(_ scalar: inout YAMLScalar, at mark: SourceMark) -> [Problem] {
        guard scalar.text.unicodeScalars.contains("$") else { return [] }
        let text = Array(scalar.text.unicodeScalars)
        let rawReferences = referenceOffsets(from: mark.index, to: scalar.endIndex)
        var output = String.UnicodeScalarView()
        var problems: [Problem] = []
        var referenceNumber = 0
        var index = 0
        while index < text.count {
            let next: Unicode.Scalar? = index + 1 < text.count ? text[index + 1] : nil
            guard text[index] == "$", let next, next == "$" || next == "{" else {
                output.append(text[index])
                index += 1
                continue
            }
            if next == "$" {
                output.append("$")
                index += 2
                continue
            }
            let referenceMark =
                referenceNumber < rawReferences.count ? source.mark(at: rawReferences[referenceNumber]) : mark
            referenceNumber += 1
            guard let close = text[(index + 2)...].firstIndex(of: "}") else {
                problems.append(
                    Problem(
                        mark: referenceMark,
                        message: "unterminated \"${\" (close it with \"}\", or write \"$${\" for a literal \"${\")"
                    )
                )
                break
            }
            let inner = String(String.UnicodeScalarView(text[(index + 2)..<close]))
            switch resolve(inner) {
            case .success(let value): output.append(contentsOf: value.unicodeScalars)
            case .failure(let message):
                problems.append(
                    Problem(
                        mark: referenceMark, message: message.text, isUndefinedVariable: message.isUndefinedVariable))
            }
            index = close + 1
        }
        if problems.isEmpty {
            scalar.text = String(output)
        } else {
            scalar.alreadyReported = true
        }
        return problems
    }

    private struct Message: Error {
        var text: String
        var isUndefinedVariable = false
    }

    private func resolve(_ inner: String) -> Result<String, Message> {
        var name = inner
        var fallback: String? = nil
        if let separator = inner.firstRange(of: ":-") {
            name = String(inner[..<separator.lowerBound])
            fallback = String(inner[separator.upperBound...])
        }
        guard Self.isVariableName(name) else {
            return .failure(
                Message(
                    text: "invalid reference \"${\(inner)}\" (write ${NAME} or ${NAME:-default}; NAME is letters, "
                        + "digits and _)"
                )
            )
        }
        if let value = environment[name], !(value.isEmpty && fallback != nil) { return .success(value) }
        if let fallback { return .success(fallback) }
        return .failure(
            Message(
                text: "undefined variable \"\(name)\" (set it in the environment, or give a default: "
                    + "${\(name):-default})",
                isUndefinedVariable: true
            )
        )
    }

    private static func isVariableName(_ name: String) -> Bool {
        let letters: ClosedRange<Unicode.Scalar> = "a"..."z"
        let capitals: ClosedRange<Unicode.Scalar> = "A"..."Z"
        let digits: ClosedRange<Unicode.Scalar> = "0"..."9"
        guard let first = name.unicodeScalars.first, !digits.contains(first) else { return false }
        return name.unicodeScalars.allSatisfy {
            $0 == "_" || letters.contains($0) || capitals.contains($0) || digits.contains($0)
        }
    }

    /// Offsets of each `${` in the raw source of a scalar, skipping `$$` exactly as `interpolate` does, so the
    /// n-th reference in the value is the n-th offset here (quoted escapes aside, when the scalar start is used).
    private func referenceOffsets(from start: Int, to end: Int) -> [Int] {
        let scalars = source.scalars
        var offsets: [Int] = []
        var index = max(0, start)
        let limit = min(end, scalars.count)
        while index < limit {
            if scalars[index] == "$", index + 1 < limit {
                if scalars[index + 1] == "$" {
                    index += 2
                    continue
                }
                if scalars[index + 1] == "{" { offsets.append(index) }
            }
            index += 1
        }
        return offsets
    }
}
