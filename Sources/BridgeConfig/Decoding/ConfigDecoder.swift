import BridgeSystem

/// Turns the YAML tree into typed values, collecting every problem instead of stopping at the first.
///
/// Getters report problems and return a fallback (the default, or nil), so decoding always continues and one
/// run finds every issue. The decoded config is used only when no issue was reported.
package struct ConfigDecoder {
    /// The configuration path as given, for messages.
    package let path: String
    /// Where `*_file` secrets and `ca_file` are read from.
    package let files: any ConfigFileSystem
    /// The sink types `sinks` entries may have.
    package let sinkTypes: [SinkConfigType]
    /// What the command reads: `withoutDirectus` leaves the `directus` section undecoded.
    package let scope: ConfigScope
    /// The problems found so far.
    private(set) var issues: [ConfigIssue] = []
    /// Files a sink entry claimed (an NDJSON file, resolved by `ConfiguredPath`), with the entry's name: a second
    /// claim is reported.
    var fileClaims: [String: String] = [:]
    /// `delivery.state_dir` resolved by `ConfiguredPath`, once `delivery` is decoded: no sink may write inside it.
    var resolvedStateDirectory: String?
    /// `delivery.state_dir` as written, for messages.
    var stateDirectoryText = ""
    /// What relative paths are resolved against.
    let workingDirectory = currentWorkingDirectory()
    /// `directus.tls.ca_file`, once `directus` is decoded (nil before, and in `withoutDirectus` scope): an in-house
    /// CA usually signs the sinks' endpoints too. A sink type without a CA setting of its own (the webhook) trusts
    /// it beside the system store.
    package internal(set) var directusCAFile: String?
    /// What the sink entry being decoded takes, set by `decodeSinks` before the entry's type reads its own keys.
    package internal(set) var sinkScope = SinkScope(collections: [], events: [], subscribed: [])

    /// A decoder whose issues name `path`, for a file whose sinks may be of `sinkTypes`, reading `scope` of it.
    package init(path: String, files: any ConfigFileSystem, sinkTypes: [SinkConfigType], scope: ConfigScope) {
        self.path = path
        self.files = files
        self.sinkTypes = sinkTypes
        self.scope = scope
    }

    /// Records a problem at `mark`.
    package mutating func report(_ message: String, at mark: SourceMark) {
        issues.append(ConfigIssue(path: path, at: mark, message))
    }

    // MARK: - Mappings

    /// Views `node` as a mapping named `name` whose allowed keys are `keys`, reporting unknown keys (with a
    /// suggestion). A nil or null node gives an empty view at `fallback`; a scalar or list is reported.
    package mutating func mapping(_ node: YAMLNode?, name: String, keys: [String], fallback: SourceMark) -> MappingView {
        guard let node else { return MappingView(name: name, mark: fallback, entries: []) }
        guard case .mapping(let entries) = node.content else {
            if node.scalar?.alreadyReported != true {
                report("\(name): expected a mapping of keys, got \(node.kindDescription)", at: node.mark)
            }
            var view = MappingView(name: name, mark: node.mark, entries: [])
            view.isMapping = false
            return view
        }
        var view = MappingView(name: name, mark: node.mark, entries: entries)
        for entry in entries where !keys.contains(entry.key) {
            if name.isEmpty, entry.key.hasPrefix("x-") { continue }  // extension keys, e.g. to hold anchors
            let suggestion = Suggestion.closest(to: entry.key, in: keys)
            if let suggestion { view.suggestedKeys.insert(suggestion) }
            report(unknownKeyMessage(entry.key, suggestion: suggestion, in: name, allowed: keys), at: entry.keyMark)
        }
        return view
    }

    /// The section `key` of `parent` (absent sections decode as empty, i.e. all defaults).
    package mutating func section(_ parent: MappingView, _ key: String, keys: [String]) -> MappingView {
        var view = mapping(parent[key], name: parent.field(key), keys: keys, fallback: parent.mark)
        if !parent.isMapping { view.isMapping = false }  // the parent's shape was reported; stay quiet inside it
        return view
    }

    private func unknownKeyMessage(_ key: String, suggestion: String?, in name: String, allowed: [String]) -> String {
        if let suggestion {
            return "unknown key \"\(key)\" (did you mean \"\(suggestion)\"?)"
        }
        if let home = ConfigKeys.section(holding: key, sinkTypes: sinkTypes), home != ConfigKeys.sectionName(of: name) {
            return "unknown key \"\(key)\" (it belongs \(ConfigKeys.describe(section: home)))"
        }
        let place = name.isEmpty ? "at the top level" : "in \(name)"
        return "unknown key \"\(key)\" \(place) (allowed: \(allowed.joined(separator: ", ")))"
    }

    // MARK: - Scalars

    /// The scalar at `node`, or nil (reported) when it is a list or mapping; nil (quietly) when interpolation
    /// already reported it.
    package mutating func scalar(_ node: YAMLNode, field: String, expected: String) -> YAMLScalar? {
        guard let scalar = node.scalar else {
            report("\(field): expected \(expected), got \(node.kindDescription)", at: node.mark)
            return nil
        }
        return scalar.alreadyReported ? nil : scalar
    }

    /// True when `key` is absent or null; reports it as missing when it is.
    package mutating func requirePresent(_ map: MappingView, _ key: String, hint: String = "") -> Bool {
        if map[key] != nil { return true }
        // Already reported: as a misspelt key, or the whole section as not being a mapping.
        if map.suggestedKeys.contains(key) || !map.isMapping { return false }
        if let keyMark = map.keyMark(key) {
            report("\(map.field(key)) needs a value\(hint)", at: keyMark)
        } else {
            report("missing required key \"\(key)\"\(map.location)\(hint)", at: map.mark)
        }
        return false
    }

    /// The text of `key`; nil when absent, null, empty or invalid (invalid is reported).
    package mutating func string(_ map: MappingView, _ key: String) -> String? {
        guard let node = map[key], let scalar = scalar(node, field: map.field(key), expected: "a string") else {
            return nil
        }
        return scalar.text.isEmpty ? nil : scalar.text
    }

    /// The text of a required `key`; reports it missing when absent, null or empty.
    package mutating func requiredString(_ map: MappingView, _ key: String, hint: String = "") -> String? {
        guard requirePresent(map, key, hint: hint), let node = map[key] else { return nil }
        guard let scalar = scalar(node, field: map.field(key), expected: "a string") else { return nil }
        if scalar.text.isEmpty { report("\(map.field(key)) must not be empty", at: node.mark) }
        return scalar.text.isEmpty ? nil : scalar.text
    }

    /// A boolean: only plain `true` or `false` (any case variant of the core schema), so a quoted `"true"` or a
    /// YAML 1.1 `yes` is refused rather than guessed.
    package mutating func bool(_ map: MappingView, _ key: String, default fallback: Bool) -> Bool {
        guard let node = map[key], let scalar = scalar(node, field: map.field(key), expected: "true or false")
        else { return fallback }
        if case .bool(let value) = YAMLCoreSchema.resolve(scalar) { return value }
        let shown = scalar.style == .plain ? "\"\(scalar.text)\"" : "the quoted string \"\(scalar.text)\""
        report("\(map.field(key)): expected true or false, got \(shown)", at: node.mark)
        return fallback
    }

    /// A whole number in `range` (plain scalars only).
    package mutating func integer(_ map: MappingView, _ key: String, default fallback: Int, range: ClosedRange<Int>) -> Int {
        guard let node = map[key], let scalar = scalar(node, field: map.field(key), expected: "a whole number")
        else { return fallback }
        guard case .integer(let text) = YAMLCoreSchema.resolve(scalar) else {
            let shown = scalar.style == .plain ? "\"\(scalar.text)\"" : "the quoted string \"\(scalar.text)\""
            report("\(map.field(key)): expected a whole number, got \(shown)", at: node.mark)
            return fallback
        }
        guard let value = Int(text), range.contains(value) else {
            report(
                "\(map.field(key)) must be between \(range.lowerBound) and \(range.upperBound), got \(text)",
                at: node.mark
            )
            return fallback
        }
        return value
    }

    /// A byte size: a whole number of bytes, or a number and a unit such as `256MiB` (``ByteSizeText``).
    package mutating func byteSize(_ map: MappingView, _ key: String, default fallback: Int, range: ClosedRange<Int>)
        -> Int
    {
        guard let node = map[key],
            let scalar = scalar(node, field: map.field(key), expected: "a size such as \"256MiB\"")
        else { return fallback }
        let bytes: Int?
        if case .integer(let text) = YAMLCoreSchema.resolve(scalar) {
            bytes = Int(text)
        } else {
            bytes = ByteSizeText.parse(scalar.text)
        }
        guard let bytes else {
            report(
                "\(map.field(key)): invalid size \"\(scalar.text)\" (use a whole number of bytes, or a whole number "
                    + "and a unit: B, KiB, MiB, GiB or TiB, e.g. \"256MiB\")",
                at: node.mark
            )
            return fallback
        }
        guard range.contains(bytes) else {
            report(
                "\(map.field(key)) must be between \(ByteSizeText.format(range.lowerBound)) and "
                    + "\(ByteSizeText.format(range.upperBound)), got \(scalar.text)",
                at: node.mark
            )
            return fallback
        }
        return bytes
    }

    /// A duration such as `250ms`, `10s`, `1m30s`; zero only when `allowZero`.
    package mutating func duration(
        _ map: MappingView,
        _ key: String,
        default fallback: Duration,
        allowZero: Bool = false,
        atLeast minimum: Duration? = nil
    ) -> Duration {
        guard let node = map[key] else { return fallback }
        return duration(node, field: map.field(key), allowZero: allowZero, atLeast: minimum) ?? fallback
    }

    /// A duration at `node`, or nil (reported). With `minimum`, a shorter one (other than an allowed zero) is
    /// reported: intervals that run a loop have a floor, so a typo (`5ms` for `5s`) cannot make the bridge spin.
    package mutating func duration(
        _ node: YAMLNode, field: String, allowZero: Bool, atLeast minimum: Duration? = nil
    ) -> Duration? {
        guard let scalar = scalar(node, field: field, expected: "a duration such as \"10s\"") else { return nil }
        guard let value = DurationText.parse(scalar.text) else {
            report(
                "\(field): invalid duration \"\(scalar.text)\" (use a number and a unit: ms, s, m or h, "
                    + "e.g. \"250ms\", \"10s\", \"1m30s\")",
                at: node.mark
            )
            return nil
        }
        if value == .zero, !allowZero {
            report("\(field) must be longer than 0", at: node.mark)
            return nil
        }
        if let minimum, value < minimum, !(allowZero && value == .zero) {
            let floor = allowZero ? "0s (off) or at least" : "at least"
            report("\(field) must be \(floor) \(DurationText.format(minimum)), got \(scalar.text)", at: node.mark)
            return nil
        }
        return value
    }

    /// One of `E`'s raw values, with the allowed values and a suggestion when it is not.
    package mutating func choice<E: RawRepresentable & CaseIterable>(_ map: MappingView, _ key: String, default fallback: E)
        -> E where E.RawValue == String
    {
        guard let node = map[key] else { return fallback }
        let allowed = E.allCases.map(\.rawValue)
        return choice(node, field: map.field(key), allowed: allowed).flatMap(E.init(rawValue:)) ?? fallback
    }

    /// The text at `node` when it is one of `allowed`, else nil (reported with the allowed values).
    package mutating func choice(_ node: YAMLNode, field: String, allowed: [String], noun: String = "value") -> String? {
        guard let scalar = scalar(node, field: field, expected: "one of \(allowed.joined(separator: ", "))") else {
            return nil
        }
        if allowed.contains(scalar.text) { return scalar.text }
        report("\(field): " + Self.unknownValueMessage(scalar.text, allowed: allowed, noun: noun), at: node.mark)
        return nil
    }

    /// `unknown value "x" (allowed: a, b)` or `unknown value "x" (did you mean "a"? allowed: a, b)`.
    package static func unknownValueMessage(_ text: String, allowed: [String], noun: String = "value") -> String {
        let list = allowed.joined(separator: ", ")
        if let suggestion = Suggestion.closest(to: text, in: allowed) {
            return "unknown \(noun) \"\(text)\" (did you mean \"\(suggestion)\"? allowed: \(list))"
        }
        return "unknown \(noun) \"\(text)\" (allowed: \(list))"
    }
}
