/// A YAML mapping being decoded into a config struct: its entries, where it is and its dotted name.
package struct MappingView {
    /// The dotted config path of this mapping (`directus.auth`, `sinks[1]`), empty for the root.
    package let name: String
    /// Where the mapping starts; for a section absent from the file, where its parent starts.
    package let mark: SourceMark
    /// The entries in file order.
    package let entries: [YAMLMappingEntry]
    /// Allowed keys that an unknown key was reported as a likely misspelling of: not also reported missing.
    package var suggestedKeys: Set<String> = []
    /// False when the node was not a mapping (already reported): its keys are then not reported missing.
    package var isMapping = true

    /// The value of `key`, or nil when absent or null (`key:` with nothing, `~`, `null`).
    package subscript(key: String) -> YAMLNode? {
        guard let node = entries.first(where: { $0.key == key })?.value else { return nil }
        if let scalar = node.scalar, !scalar.alreadyReported, YAMLCoreSchema.resolve(scalar) == .null { return nil }
        return node
    }

    /// Where `key` is written, if it is.
    package func keyMark(_ key: String) -> SourceMark? {
        entries.first(where: { $0.key == key })?.keyMark
    }

    /// The dotted name of `key` in this mapping, used to prefix messages.
    package func field(_ key: String) -> String {
        name.isEmpty ? key : "\(name).\(key)"
    }

    /// How `name` is shown in "missing required key … in X" messages.
    package var location: String {
        name.isEmpty ? "" : " in \(name)"
    }
}
