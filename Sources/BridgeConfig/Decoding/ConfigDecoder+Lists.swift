import BridgeSystem

extension ConfigDecoder {
    /// The items of list `key`, nil when absent or null; a scalar or mapping is reported (and gives nil).
    package mutating func list(_ map: MappingView, _ key: String, example: String = "[a, b]") -> [YAMLNode]? {
        guard let node = map[key] else { return nil }
        guard case .sequence(let items) = node.content else {
            if node.scalar?.alreadyReported != true {
                report(
                    "\(map.field(key)): expected a list such as \(example), got \(node.kindDescription)",
                    at: node.mark
                )
            }
            return nil
        }
        return items
    }

    /// The non-empty strings of list `key` with their positions; empty when absent.
    package mutating func stringList(_ map: MappingView, _ key: String) -> [(text: String, mark: SourceMark)] {
        guard let items = list(map, key) else { return [] }
        var result: [(text: String, mark: SourceMark)] = []
        for (index, item) in items.enumerated() {
            let field = "\(map.field(key))[\(index)]"
            guard let scalar = scalar(item, field: field, expected: "a string") else { continue }
            if scalar.text.isEmpty || YAMLCoreSchema.resolve(scalar) == .null {
                report("\(field) must not be empty", at: item.mark)
                continue
            }
            result.append((scalar.text, item.mark))
        }
        return result
    }

    /// An `events` list: each of `allowed`, no duplicates; `fallback` when absent. An explicitly empty list is
    /// returned as empty (callers decide whether that is allowed).
    package mutating func events(
        _ map: MappingView,
        _ key: String,
        allowed: [EventKind],
        default fallback: [EventKind]
    ) -> [EventKind] {
        guard let items = list(map, key, example: "[create, update]") else { return fallback }
        var result: [EventKind] = []
        for (index, item) in items.enumerated() {
            let field = "\(map.field(key))[\(index)]"
            if !allowed.contains(.snapshot), item.scalar?.text == EventKind.snapshot.rawValue {
                report(
                    "\(field): \"snapshot\" is not a subscription event; set \"snapshot: true\" instead",
                    at: item.mark
                )
                continue
            }
            guard let text = choice(item, field: field, allowed: allowed.map(\.rawValue), noun: "event"),
                let kind = EventKind(rawValue: text)
            else { continue }
            if result.contains(kind) {
                report("\(field): duplicate event \"\(text)\"", at: item.mark)
                continue
            }
            result.append(kind)
        }
        return result
    }

    // MARK: - Secrets

    /// A secret given either inline (`valueKey`) or as a file (`fileKey`), never both; nil when neither is set.
    /// Values are never echoed in messages.
    package mutating func secret(_ map: MappingView, _ valueKey: String, orFile fileKey: String) -> String? {
        let inline = credential(map, valueKey)
        guard let fileNode = map[fileKey] else { return inline }
        if inline != nil {
            report("\(map.name): set \"\(valueKey)\" or \"\(fileKey)\", not both", at: map.keyMark(fileKey) ?? map.mark)
            return inline
        }
        let text = readSecretFile(fileNode, field: map.field(fileKey))
        refuseLineBreaks(text, field: map.field(fileKey), at: fileNode.mark)
        return text
    }

    /// The string at `key` (`string`), reported when it is not one line: a credential that is not secret (an email,
    /// a user name, a one-time password) travels in a login or a header all the same.
    package mutating func credential(_ map: MappingView, _ key: String) -> String? {
        let text = string(map, key)
        refuseLineBreaks(text, field: map.field(key), at: map[key]?.mark)
        return text
    }

    /// Reports `field` at `mark` when `text` holds CR, LF or NUL (`OneLine`): a credential travels in a header or a
    /// C string, where a line break starts a header the value chose. The message names the key, never the value.
    package mutating func refuseLineBreaks(_ text: String?, field: String, at mark: SourceMark?) {
        guard let text, OneLine.isBroken(text) else { return }
        report(
            "\(field) must be one line: it holds a line break (CR or LF) or NUL; the value is not shown",
            at: mark ?? .start)
    }

    /// The content of the file named at `node`, UTF-8, with trailing line breaks removed; nil (reported) when it
    /// cannot be read or is empty.
    package mutating func readSecretFile(_ node: YAMLNode, field: String) -> String? {
        guard let scalar = scalar(node, field: field, expected: "a file path") else { return nil }
        guard !scalar.text.isEmpty else {
            report("\(field) must not be empty", at: node.mark)
            return nil
        }
        guard let bytes = readFile(scalar.text, field: field, at: node.mark) else { return nil }
        guard var text = String(validating: bytes, as: UTF8.self) else {
            report("\(field): \"\(scalar.text)\" is not UTF-8 text", at: node.mark)
            return nil
        }
        while text.hasSuffix("\n") || text.hasSuffix("\r") || text.hasSuffix("\r\n") { text.removeLast() }
        if text.isEmpty {
            report("\(field): \"\(scalar.text)\" is empty", at: node.mark)
            return nil
        }
        return text
    }

    /// The bytes of file `path`, or nil (reported at `mark`).
    package mutating func readFile(_ path: String, field: String, at mark: SourceMark) -> [UInt8]? {
        switch files.readFile(atPath: path) {
        case .success(let bytes): return bytes
        case .failure(let problem):
            report("\(field): cannot read \"\(path)\": \(problem.reason)", at: mark)
            return nil
        }
    }

    /// Secrets under `key` (a string or a list) or read from the file named by `fileKey`, not both; empty strings
    /// mean "no secret". Never echoes a value. Returned with their positions, for checks of their format.
    package mutating func secretList(_ map: MappingView, _ key: String, orFile fileKey: String)
        -> [(text: String, mark: SourceMark)]
    {
        var secrets: [(text: String, mark: SourceMark)] = []
        if let node = map[key] {
            if case .sequence = node.content {
                secrets = stringList(map, key)
            } else if let scalar = scalar(node, field: map.field(key), expected: "a string or a list"),
                !scalar.text.isEmpty
            {
                secrets = [(scalar.text, node.mark)]
            }
        }
        if let fileNode = map[fileKey] {
            if map[key] != nil {
                report("\(map.name): set \"\(key)\" or \"\(fileKey)\", not both", at: map.keyMark(fileKey) ?? map.mark)
            } else if let text = readSecretFile(fileNode, field: map.field(fileKey)) {
                secrets = [(text, fileNode.mark)]
            }
        }
        let field = map.field(map[fileKey] != nil && map[key] == nil ? fileKey : key)
        for secret in secrets { refuseLineBreaks(secret.text, field: field, at: secret.mark) }
        return secrets
    }
}
