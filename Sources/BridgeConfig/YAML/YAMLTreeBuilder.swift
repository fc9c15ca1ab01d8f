/// Builds a `YAMLNode` tree from libyaml events, rejecting what a configuration file must not contain:
/// duplicate keys, non-scalar keys, merge keys (`<<`), unknown tags and more than one document.
///
/// Anchors and aliases are supported: an alias is replaced by a copy of the anchored node, so problems inside
/// it are reported where the anchored text is. Expansion is capped (`maximumExpandedNodes`) so that a
/// "billion laughs" file cannot exhaust memory.
package struct YAMLTreeBuilder {
    /// The most nodes aliases may add to the tree.
    package static let maximumExpandedNodes = 10_000
    /// The deepest nesting of lists and mappings. The tree and everything made of it (queries, their JSON, the
    /// dump) are walked recursively: 10,000 levels (a 20 KB file) overflowed the stack. A Directus query needs a few
    /// dozen at most.
    package static let maximumDepth = 256
    private static let tooDeep = "lists and mappings nested deeper than \(maximumDepth) levels; flatten the value"

    private enum PendingKey {
        case key(String, SourceMark)
        /// The key was rejected and already reported: its value is read and dropped.
        case skip
    }

    private enum Frame {
        case sequence(start: SourceMark, anchor: String?, items: [YAMLNode])
        case mapping(
            start: SourceMark,
            anchor: String?,
            entries: [YAMLMappingEntry],
            pending: PendingKey?,
            firstSeen: [String: SourceMark]
        )
    }

    private static let supportedTags: Set<String> = [
        "!", "tag:yaml.org,2002:str", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map",
    ]

    private let path: String
    private let interpolator: Interpolator?
    private var stack: [Frame] = []
    private var anchors: [String: YAMLNode] = [:]
    private var expandedNodes = 0
    private var documents = 0
    /// The document's root node once complete.
    package private(set) var root: YAMLNode?
    /// Problems found so far.
    package private(set) var issues: [ConfigIssue] = []

    /// A builder whose issues name `path`, interpolating scalar values with `interpolator` when given.
    package init(path: String, interpolator: Interpolator?) {
        self.path = path
        self.interpolator = interpolator
    }

    /// Parses `bytes` (UTF-8 without BOM) with libyaml and returns the root (nil for an empty stream) and issues.
    /// A syntax error stops the parse; the other problems are collected and parsing goes on. Scalar values (not
    /// keys) are interpolated from `environment` as they are read, so alias copies share the result.
    package static func build(
        bytes: [UInt8],
        source: SourceText,
        path: String,
        environment: [String: String]?
    ) -> (YAMLNode?, [ConfigIssue]) {
        let parser = YAMLParser(bytes: bytes)
        let interpolator = environment.map { Interpolator(environment: $0, source: source) }
        var builder = YAMLTreeBuilder(path: path, interpolator: interpolator)
        while true {
            switch parser.nextEvent() {
            case .failure(let failure):
                builder.issues.append(builder.syntaxIssue(failure, bytes: bytes, source: source))
                return (nil, builder.issues)
            case .success(.streamEnd):
                return (builder.root, builder.issues)
            case .success(let event):
                guard builder.handle(event) else { return (nil, builder.issues) }
            }
        }
    }

    /// Feeds one event; returns false when parsing must stop.
    mutating func handle(_ event: YAMLParser.Event) -> Bool {
        switch event {
        case .streamStart, .streamEnd, .documentEnd:
            return true
        case .documentStart(let mark):
            documents += 1
            if documents > 1 {
                report("a configuration file holds one YAML document; remove the second \"---\" document", at: mark)
                return false
            }
            return true
        case .scalar(var scalar, let anchor, let mark):
            // A value with a tag we do not understand was reported; decoders must not complain about it again.
            if !checkTag(scalar.tag, at: mark) { scalar.alreadyReported = true }
            if let interpolator, !isAtKeyPosition {
                for problem in interpolator.interpolate(&scalar, at: mark) {
                    let issue = ConfigIssue(path: path, at: problem.mark, problem.message)
                    issues.append(issue)
                    if problem.isUndefinedVariable { scalar.undefinedVariables.append(issue) }
                }
            }
            complete(YAMLNode(.scalar(scalar), at: mark), anchor: anchor)
            return true
        case .alias(let anchor, let mark):
            return expandAlias(anchor, at: mark)
        case .sequenceStart(let anchor, let tag, let mark):
            guard withinDepth(at: mark) else { return false }
            _ = checkTag(tag, at: mark)
            stack.append(.sequence(start: mark, anchor: anchor, items: []))
            return true
        case .mappingStart(let anchor, let tag, let mark):
            guard withinDepth(at: mark) else { return false }
            _ = checkTag(tag, at: mark)
            stack.append(.mapping(start: mark, anchor: anchor, entries: [], pending: nil, firstSeen: [:]))
            return true
        case .sequenceEnd:
            guard case .sequence(let start, let anchor, let items) = stack.popLast() else { return false }
            complete(YAMLNode(.sequence(items), at: start), anchor: anchor)
            return true
        case .mappingEnd:
            guard case .mapping(let start, let anchor, let entries, _, _) = stack.popLast() else { return false }
            complete(YAMLNode(.mapping(entries), at: start), anchor: anchor)
            return true
        }
    }

    /// Whether a list or mapping may open at `mark`; reports it (parsing stops) when it would be too deep.
    private mutating func withinDepth(at mark: SourceMark) -> Bool {
        guard stack.count >= Self.maximumDepth else { return true }
        report(Self.tooDeep, at: mark)
        return false
    }

    /// True when the next completed node is a mapping key.
    private var isAtKeyPosition: Bool {
        if case .mapping(_, _, _, nil, _)? = stack.last { return true }
        return false
    }

    private mutating func expandAlias(_ anchor: String, at mark: SourceMark) -> Bool {
        guard var node = anchors[anchor] else {
            report("unknown alias \"*\(anchor)\" (an alias must follow its \"&\(anchor)\" anchor)", at: mark)
            var placeholder = YAMLScalar(text: "", style: .plain, endIndex: mark.index)
            placeholder.alreadyReported = true
            complete(YAMLNode(.scalar(placeholder), at: mark), anchor: nil)
            return true
        }
        guard stack.count + node.depth <= Self.maximumDepth else {
            report(Self.tooDeep, at: mark)
            return false
        }
        expandedNodes += node.nodeCount
        if expandedNodes > Self.maximumExpandedNodes {
            report("aliases expand to more than \(Self.maximumExpandedNodes) nodes; write the values out", at: mark)
            return false
        }
        // A copied mapping or list keeps the anchored text's positions; only the node itself moves to the alias,
        // so a problem with the value's type is shown where the alias is used.
        node.mark = mark
        complete(node, anchor: nil)
        return true
    }

    private mutating func complete(_ node: YAMLNode, anchor: String?) {
        if let anchor { anchors[anchor] = node }
        guard let top = stack.popLast() else {
            root = node
            return
        }
        switch top {
        case .sequence(let start, let anchor, var items):
            items.append(node)
            stack.append(.sequence(start: start, anchor: anchor, items: items))
        case .mapping(let start, let anchor, var entries, let pending, var firstSeen):
            var nextPending: PendingKey? = nil
            switch pending {
            case .none:
                nextPending = acceptKey(node, firstSeen: &firstSeen)
            case .key(let key, let keyMark)?:
                entries.append(YAMLMappingEntry(key: key, keyMark: keyMark, value: node))
            case .skip?:
                break
            }
            stack.append(
                .mapping(start: start, anchor: anchor, entries: entries, pending: nextPending, firstSeen: firstSeen)
            )
        }
    }

    private mutating func acceptKey(_ node: YAMLNode, firstSeen: inout [String: SourceMark]) -> PendingKey {
        guard let scalar = node.scalar else {
            report("a mapping key must be a plain value, not \(node.kindDescription)", at: node.mark)
            return .skip
        }
        if scalar.style == .plain, scalar.text == "<<" {
            report("merge keys (\"<<\") are not supported; repeat the keys or alias the whole value", at: node.mark)
            return .skip
        }
        if let first = firstSeen[scalar.text] {
            report(
                "duplicate key \"\(scalar.text)\" (first defined at line \(first.line), column \(first.column))",
                at: node.mark
            )
            return .skip
        }
        firstSeen[scalar.text] = node.mark
        return .key(scalar.text, node.mark)
    }

    /// Reports a tag other than `!!str` (and the no-op `!!seq`/`!!map`); returns false when it did.
    private mutating func checkTag(_ tag: String?, at mark: SourceMark) -> Bool {
        guard let tag, !Self.supportedTags.contains(tag) else { return true }
        let shown = tag.hasPrefix("tag:yaml.org,2002:") ? "!!" + tag.dropFirst("tag:yaml.org,2002:".count) : tag
        report("unsupported tag \"\(shown)\" (only \"!!str\" is understood)", at: mark)
        return false
    }

    private mutating func report(_ message: String, at mark: SourceMark) {
        issues.append(ConfigIssue(path: path, at: mark, message))
    }

    private func syntaxIssue(_ failure: YAMLParser.Failure, bytes: [UInt8], source: SourceText) -> ConfigIssue {
        let mark =
            failure.mark
            ?? source.mark(
                at: String(decoding: bytes.prefix(failure.byteOffset), as: UTF8.self).unicodeScalars.count
            )
        var message = "invalid YAML: \(failure.problem)"
        if let context = failure.context {
            message += " (\(context.text) at line \(context.mark.line), column \(context.mark.column))"
        }
        return ConfigIssue(path: path, at: mark, message)
    }
}
