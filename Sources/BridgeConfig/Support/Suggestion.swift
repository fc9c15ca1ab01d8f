/// "Did you mean …?" for misspelt keys and values.
package enum Suggestion {
    /// The candidate closest to `word`, when it is close enough to be a plausible typo: the same up to case,
    /// `_`/`-` and camelCase, or at most 1 edit away (2 for words of 5 or more characters).
    package static func closest(to word: String, in candidates: [String]) -> String? {
        let normalizedWord = normalize(word)
        if let same = candidates.first(where: { normalize($0) == normalizedWord }) { return same }
        let limit = word.count >= 5 ? 2 : 1
        var best: (candidate: String, distance: Int)? = nil
        for candidate in candidates {
            let distance = editDistance(Array(word.lowercased().unicodeScalars), Array(candidate.unicodeScalars))
            if distance <= limit, distance < (best?.distance ?? Int.max) { best = (candidate, distance) }
        }
        return best?.candidate
    }

    /// ` (did you mean "x"?)` or the empty string.
    package static func hint(for word: String, in candidates: [String]) -> String {
        closest(to: word, in: candidates).map { " (did you mean \"\($0)\"?)" } ?? ""
    }

    private static func normalize(_ word: String) -> String {
        String(word.lowercased().unicodeScalars.filter { $0 != "_" && $0 != "-" })
    }

    /// Levenshtein distance with adjacent transpositions counted as one edit (optimal string alignment).
    package static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previousPrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previousPrevious[j - 2] + 1)
                }
            }
            (previousPrevious, previous, current) = (previous, current, previousPrevious)
        }
        return previous[b.count]
    }
}
