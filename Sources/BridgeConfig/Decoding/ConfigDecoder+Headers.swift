import BridgeSystem

extension ConfigDecoder {
    /// A mapping of header names (tokens) to single-line values under `key`: none of `reserved` (lower-case), no
    /// name twice (in any case). A value with CR, LF or NUL is refused, so nothing configured can split a request.
    package mutating func headers(_ map: MappingView, _ key: String, reserved: Set<String>) -> [HTTPHeader] {
        guard let node = map[key] else { return [] }
        guard case .mapping(let entries) = node.content else {
            if node.scalar?.alreadyReported != true {
                report(
                    "\(map.field(key)): expected a mapping such as { x-source: bridge }, got "
                        + node.kindDescription,
                    at: node.mark
                )
            }
            return []
        }
        var headers: [HTTPHeader] = []
        var seen: Set<String> = []
        for entry in entries {
            let field = "\(map.field(key)).\(entry.key)"
            let lowered = entry.key.lowercased()
            let tokenCharacters = "!#$%&'*+-.^_`|~"
            if entry.key.isEmpty
                || !entry.key.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || tokenCharacters.contains($0)) })
            {
                report("\(map.field(key)): invalid header name \"\(entry.key)\"", at: entry.keyMark)
                continue
            }
            if reserved.contains(lowered) {
                report(
                    "\(map.field(key)): \"\(entry.key)\" is set by the bridge and cannot be configured",
                    at: entry.keyMark
                )
                continue
            }
            if !seen.insert(lowered).inserted {
                report("\(map.field(key)): header \"\(entry.key)\" is given twice", at: entry.keyMark)
                continue
            }
            guard let scalar = scalar(entry.value, field: field, expected: "a string") else { continue }
            if OneLine.isBroken(scalar.text) {
                report("\(field): a header value must be one line", at: entry.value.mark)
                continue
            }
            headers.append(HTTPHeader(name: entry.key, value: scalar.text))
        }
        return headers
    }
}
