/// A 1-based position in the configuration text, plus the 0-based Unicode-scalar offset libyaml counts in.
package struct SourceMark: Sendable, Equatable {
    /// 1-based line.
    package var line: Int
    /// 1-based column, counted in Unicode scalars (what editors show for UTF-8 text without tabs).
    package var column: Int
    /// 0-based offset in Unicode scalars from the start of the text (a CRLF counts as two).
    package var index: Int
    /// Where the text came from when it is not the configuration file: the variable or `--set` that brought the
    /// value in (`EnvironmentOverrides`), so that a problem with it names that instead of a line of the file.
    package var origin: String?

    /// Creates a mark.
    package init(line: Int, column: Int, index: Int, origin: String? = nil) {
        self.line = line
        self.column = column
        self.index = index
        self.origin = origin
    }

    /// The start of the text, where problems about the whole file are reported.
    package static let start = SourceMark(line: 1, column: 1, index: 0)
}

/// How a scalar was written; only plain scalars are typed (quoted ones are always strings).
package enum ScalarStyle: Sendable, Equatable {
    /// `text`.
    case plain
    /// `'text'`.
    case singleQuoted
    /// `"text"`.
    case doubleQuoted
    /// `|` block.
    case literal
    /// `>` block.
    case folded
}

/// A scalar value as read from the file, after `${VAR}` interpolation.
package struct YAMLScalar: Sendable, Equatable {
    /// The text after YAML unescaping (and, once interpolated, after `${VAR}` substitution).
    package var text: String
    /// How the scalar was written.
    package var style: ScalarStyle
    /// The explicit tag (`!!str` arrives as `tag:yaml.org,2002:str`), if any.
    package var tag: String?
    /// Offset just past the scalar in the source, used to find `${` references inside it.
    package var endIndex: Int
    /// True when interpolation failed and the problem was already reported: decoders skip the value quietly
    /// instead of piling a second, misleading complaint on the same spot.
    package var alreadyReported: Bool = false
    /// The issues of its `${NAME}` references to undefined variables, also among the builder's issues: a command
    /// that does not read every section drops those only unread sections have (`ConfigScope.relevant`).
    package var undefinedVariables: [ConfigIssue] = []

    /// Creates a scalar.
    package init(text: String, style: ScalarStyle, tag: String? = nil, endIndex: Int) {
        self.text = text
        self.style = style
        self.tag = tag
        self.endIndex = endIndex
    }
}

/// One `key: value` pair of a mapping. Keys are always scalars (the parser rejects others) and are never
/// interpolated.
package struct YAMLMappingEntry: Sendable, Equatable {
    /// The key text.
    package var key: String
    /// Where the key starts.
    package var keyMark: SourceMark
    /// The value.
    package var value: YAMLNode

    /// Creates an entry.
    package init(key: String, keyMark: SourceMark, value: YAMLNode) {
        self.key = key
        self.keyMark = keyMark
        self.value = value
    }
}

/// A YAML node with the position where it starts.
package struct YAMLNode: Sendable, Equatable {
    /// The node's content.
    package enum Content: Sendable, Equatable {
        /// A single value.
        case scalar(YAMLScalar)
        /// A list.
        case sequence([YAMLNode])
        /// Key–value pairs in file order.
        case mapping([YAMLMappingEntry])
    }

    /// The content.
    package var content: Content
    /// Where the node starts (for a quoted scalar: its opening quote).
    package var mark: SourceMark

    /// Creates a node.
    package init(_ content: Content, at mark: SourceMark) {
        self.content = content
        self.mark = mark
    }

    /// The scalar, when this node is one.
    package var scalar: YAMLScalar? {
        if case .scalar(let scalar) = content { return scalar }
        return nil
    }

    /// A short noun for messages ("a mapping", "a list", "a string").
    package var kindDescription: String {
        switch content {
        case .mapping: "a mapping"
        case .sequence: "a list"
        case .scalar(let scalar):
            switch YAMLCoreSchema.resolve(scalar) {
            case .null: "null"
            case .bool: "a boolean"
            case .integer, .float: "a number"
            case .string: "a string"
            }
        }
    }

    /// How many lists and mappings deep this tree is (0 for a scalar), used to bound nesting through aliases.
    package var depth: Int {
        switch content {
        case .scalar: 0
        case .sequence(let items): 1 + (items.map(\.depth).max() ?? 0)
        case .mapping(let entries): 1 + (entries.map(\.value.depth).max() ?? 0)
        }
    }

    /// How many nodes this tree holds, used to bound alias expansion.
    package var nodeCount: Int {
        switch content {
        case .scalar: 1
        case .sequence(let items): items.reduce(1) { $0 + $1.nodeCount }
        case .mapping(let entries): entries.reduce(1) { $0 + $1.value.nodeCount + 1 }
        }
    }
}

extension YAMLNode {
    /// This node with every mark in it (keys' too) coming from `origin`.
    package func from(_ origin: String) -> YAMLNode {
        var node = self
        node.mark.origin = origin
        switch content {
        case .scalar: break
        case .sequence(let items): node.content = .sequence(items.map { $0.from(origin) })
        case .mapping(let entries):
            node.content = .mapping(
                entries.map { entry in
                    var keyMark = entry.keyMark
                    keyMark.origin = origin
                    return YAMLMappingEntry(key: entry.key, keyMark: keyMark, value: entry.value.from(origin))
                })
        }
        return node
    }
}
