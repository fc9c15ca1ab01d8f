/// Configuration from the environment (docs/configuration.md "Configuration from the environment"): every variable
/// `DIRECTUS_BRIDGE__<KEY>__<KEY>…` sets one value of `bridge.yaml`, as Debezium Server's `DEBEZIUM_…` variables and
/// ASP.NET's `__` do. `__` separates keys (a key's own `_` stays: `DELIVERY__STATE_DIR`), a number is a list
/// position (`SINKS__0__TYPE`), and the value is read as YAML (`5s`, `true`, `["kafka-1:9092"]`).
///
/// A value set here wins over the file's; with no file at all the environment alone is the configuration, which
/// is what a container wants.
package enum EnvironmentOverrides {
    /// The prefix of the variables (two underscores: `DIRECTUS_BRIDGE_LISTEN` and other single-underscore names
    /// stay ordinary variables for `${NAME}`).
    package static let prefix = "DIRECTUS_BRIDGE__"

    /// One variable: where it writes and what.
    package struct Override: Equatable {
        /// The variable's name (issues name it).
        package var variable: String
        /// The keys and list positions, lower-cased (`["sinks", "0", "type"]`).
        package var path: [String]
        /// The value text.
        package var value: String
    }

    /// The overrides in `environment`, lists' positions in ascending order (position 2 before 10).
    package static func overrides(in environment: [String: String]) -> [Override] {
        inApplyingOrder(
            environment.compactMap { name, value -> Override? in
                guard name.hasPrefix(prefix), name.count > prefix.count else { return nil }
                let path = Self.split(String(name.dropFirst(prefix.count)))
                return Override(variable: name, path: path, value: value)
            })
    }

    /// `overrides` in the order they can be applied: by path, list positions as numbers (a list is filled from
    /// position 0); the sort is stable, so of two with one path the later one wins.
    package static func inApplyingOrder(_ overrides: [Override]) -> [Override] {
        overrides.sorted { lhs, rhs in
            for (left, right) in zip(lhs.path, rhs.path) where left != right {
                if let left = Int(left), let right = Int(right) { return left < right }
                return left < right
            }
            return lhs.path.count < rhs.path.count
        }
    }

    /// `SINKS__0__TYPE` → `["sinks", "0", "type"]`: split at each `__`, lower-cased.
    static func split(_ name: String) -> [String] {
        var keys: [String] = []
        var current = ""
        var pendingUnderscore = false
        for character in name {
            if character == "_" {
                if pendingUnderscore {
                    keys.append(current.lowercased())
                    current = ""
                    pendingUnderscore = false
                } else {
                    pendingUnderscore = true
                }
                continue
            }
            if pendingUnderscore { current.append("_") }
            pendingUnderscore = false
            current.append(character)
        }
        if pendingUnderscore { current.append("_") }
        keys.append(current.lowercased())
        return keys
    }

    /// The most keys and list positions a path may have: the deepest configuration value is a handful of levels
    /// down, and `set` recurses once per level (a path of thousands of keys would exhaust the stack).
    package static let maximumDepth = 32

    /// `root` (nil: no file) with every override applied, and the problems of those that cannot be.
    package static func apply(_ overrides: [Override], to root: YAMLNode?) -> (YAMLNode, [ConfigIssue]) {
        var tree = root ?? YAMLNode(.mapping([]), at: .start)
        var issues: [ConfigIssue] = []
        for override in overrides {
            guard override.path.count <= maximumDepth else {
                let problem = "\(override.path.count) keys deep: no setting is deeper than \(maximumDepth)"
                issues.append(ConfigIssue(path: override.variable, at: .start, problem))
                continue
            }
            let bytes = Array(override.value.utf8)
            let (parsed, valueIssues) = YAMLTreeBuilder.build(
                bytes: bytes,
                source: SourceText(override.value),
                path: override.variable,
                environment: nil
            )
            issues += valueIssues
            let value = (parsed ?? YAMLNode(.scalar(YAMLScalar(text: "", style: .plain, endIndex: 0)), at: .start))
                .from(override.variable)
            if let problem = set(value, at: override.path[...], in: &tree, origin: override.variable) {
                issues.append(ConfigIssue(path: override.variable, at: .start, problem))
            }
        }
        return (tree, issues)
    }

    /// Puts `value` at `path` below `node`, creating mappings and list entries on the way (marked as coming from
    /// `origin`); a problem otherwise.
    private static func set(
        _ value: YAMLNode, at path: ArraySlice<String>, in node: inout YAMLNode, origin: String
    ) -> String? {
        guard let key = path.first else {
            node = value
            return nil
        }
        let created = SourceMark(line: 1, column: 1, index: 0, origin: origin)
        if key.isEmpty { return "an empty key (three underscores in a row, or one at the end)" }
        if let position = Int(key) {
            var items: [YAMLNode]
            switch node.content {
            case .sequence(let existing): items = existing
            case .mapping(let entries) where entries.isEmpty: items = []
            default: return "\(key) is a list position, but the value there is \(node.kindDescription)"
            }
            guard position >= 0, position <= items.count else {
                return "list position \(key) skips position \(items.count) (the list has \(items.count) entries)"
            }
            if position == items.count { items.append(YAMLNode(.mapping([]), at: created)) }
            let problem = set(value, at: path.dropFirst(), in: &items[position], origin: origin)
            node.content = .sequence(items)
            return problem
        }
        guard case .mapping(var entries) = node.content else {
            return "\(key) is a key, but the value there is \(node.kindDescription)"
        }
        if let index = entries.firstIndex(where: { $0.key == key }) {
            let problem = set(value, at: path.dropFirst(), in: &entries[index].value, origin: origin)
            node.content = .mapping(entries)
            return problem
        }
        var child = YAMLNode(.mapping([]), at: created)
        let problem = set(value, at: path.dropFirst(), in: &child, origin: origin)
        entries.append(YAMLMappingEntry(key: key, keyMark: created, value: child))
        node.content = .mapping(entries)
        return problem
    }
}
