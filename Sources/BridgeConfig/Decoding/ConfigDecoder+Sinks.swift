extension ConfigDecoder {
    /// `sinks`: at least one. Each entry's shared keys (`name`, `type`, `collections`, `events`, `format`) are decoded
    /// here, the rest by its type's `SinkConfigType`. `subscribed` are the subscribed collections, which sink filters
    /// must name.
    mutating func decodeSinks(_ root: MappingView, subscribed: [String]) -> [SinkConfig] {
        guard requirePresent(root, "sinks") else { return [] }
        guard let items = list(root, "sinks", example: "[{ type: ndjson }]") else { return [] }
        if items.isEmpty, let node = root["sinks"] { report("sinks: at least one sink is required", at: node.mark) }
        let typeNames = sinkTypes.map(\.name)
        let typeHint = " (\(typeNames.joined(separator: " or ")))"
        var result: [SinkConfig] = []
        var names: [String: String] = [:]  // name → the entry that has it
        for (index, item) in items.enumerated() {
            let name = "sinks[\(index)]"
            guard case .mapping(let entries) = item.content else {
                _ = mapping(item, name: name, keys: [], fallback: item.mark)
                continue
            }
            var untyped = MappingView(name: name, mark: item.mark, entries: entries)
            if untyped["type"] == nil, !entries.contains(where: { $0.key == "type" }) {
                // Without a type the allowed keys are unknown; check against every type's so "tpye" is caught.
                untyped = mapping(item, name: name, keys: ConfigKeys.sinkKeys(of: sinkTypes), fallback: item.mark)
            }
            guard requirePresent(untyped, "type", hint: typeHint), let typeNode = untyped["type"],
                let typeName = choice(typeNode, field: "\(name).type", allowed: typeNames),
                let type = sinkTypes.first(where: { $0.name == typeName })
            else { continue }
            let map = mapping(item, name: name, keys: type.allKeys, fallback: item.mark)
            let sinkName = self.sinkName(map, claimed: &names)
            let collections = collectionFilter(map, subscribed: subscribed)
            let events = events(map, "events", allowed: EventKind.allCases, default: [])
            let format = choice(map, "format", default: EventFormat.event)
            sinkScope = SinkScope(collections: collections, events: events, subscribed: subscribed)
            guard let settings = type.decode(&self, map) else { continue }
            result.append(
                SinkConfig(
                    type: type.name, settings: settings, collections: collections, events: events, format: format,
                    name: sinkName))
        }
        return result
    }

    /// Claims the file at `path` (the value of `key` in `map`) for one sink: reports it when another sink already
    /// writes it, or when it lies inside `delivery.state_dir`, among the bridge's own files. `shown` names it.
    package mutating func claimFile(_ path: String, shown: String, by map: MappingView, key: String) {
        let file = ConfiguredPath.resolved(path, workingDirectory: workingDirectory)
        let mark = map[key]?.mark ?? map.mark
        if let owner = fileClaims[file] {
            report("\(map.field(key)): \(shown) is already written by \(owner)", at: mark)
            return
        }
        fileClaims[file] = map.name
        if let stateDirectory = resolvedStateDirectory, ConfiguredPath.isInside(file, directory: stateDirectory) {
            report(
                "\(map.field(key)): \(shown) is inside delivery.state_dir (\(stateDirectoryText)), which holds the "
                    + "bridge's own files", at: mark)
        }
    }

    /// `name` of a sink: valid (`SinkConfig.isValidName`) and unique, since it keys the sink's state.
    private mutating func sinkName(_ map: MappingView, claimed names: inout [String: String]) -> String? {
        guard let node = map["name"], let text = string(map, "name") else { return nil }
        guard SinkConfig.isValidName(text) else {
            report("\(map.field("name")) must be 1 to 64 of a-z, 0-9, _ and -; got \"\(text)\"", at: node.mark)
            return nil
        }
        if let owner = names[text] {
            report("\(map.field("name")): \"\(text)\" is already the name of \(owner)", at: node.mark)
            return nil
        }
        names[text] = map.name
        return text
    }

    /// `collections` of a sink: each must be a subscribed collection, or the filter could never match.
    private mutating func collectionFilter(_ map: MappingView, subscribed: [String]) -> [String] {
        let listed = stringList(map, "collections")
        for (index, entry) in listed.enumerated() where !subscribed.isEmpty && !subscribed.contains(entry.text) {
            report(
                "\(map.field("collections"))[\(index)]: \"\(entry.text)\" is not a subscribed collection"
                    + Suggestion.hint(for: entry.text, in: subscribed),
                at: entry.mark
            )
        }
        return listed.map(\.text)
    }
}
