extension ConfigDecoder {
    /// `subscriptions`: at least one, uids unique.
    mutating func decodeSubscriptions(_ root: MappingView) -> [SubscriptionConfig] {
        guard requirePresent(root, "subscriptions") else { return [] }
        guard let items = list(root, "subscriptions", example: "[{ collection: articles }]") else { return [] }
        if items.isEmpty, let node = root["subscriptions"] {
            report("subscriptions: at least one subscription is required", at: node.mark)
        }
        var result: [SubscriptionConfig] = []
        var uidOwners: [String: (name: String, mark: SourceMark)] = [:]
        for (index, item) in items.enumerated() {
            let name = "subscriptions[\(index)]"
            let map = mapping(item, name: name, keys: ConfigKeys.subscription, fallback: item.mark)
            guard case .mapping = item.content else { continue }
            let collection = requiredString(map, "collection")
            var uid = collection
            if let node = map["uid"], let scalar = scalar(node, field: "\(name).uid", expected: "a string") {
                if scalar.text.isEmpty {
                    report("\(name).uid must not be empty", at: node.mark)
                } else {
                    uid = scalar.text
                }
            }
            let events = events(map, "events", allowed: EventKind.subscribable, default: EventKind.subscribable)
            if events.isEmpty, let node = map["events"], case .sequence(let listed) = node.content, listed.isEmpty {
                report("\(name).events: list at least one of create, update, delete", at: node.mark)
            }
            let query = map["query"].flatMap { decodeQuery($0, field: "\(name).query") }
            let snapshot = bool(map, "snapshot", default: false)
            if let uid {
                let uidMark = map["uid"]?.mark ?? map["collection"]?.mark ?? map.mark
                if let owner = uidOwners[uid] {
                    report(
                        "\(name): duplicate uid \"\(uid)\" (also used by \(owner.name) at line \(owner.mark.line)); "
                            + "give each subscription of the same collection its own \"uid\"",
                        at: uidMark
                    )
                } else {
                    uidOwners[uid] = (name, uidMark)
                }
            }
            guard let collection, let uid else { continue }
            result.append(
                SubscriptionConfig(collection: collection, uid: uid, events: events, query: query, snapshot: snapshot)
            )
        }
        return result
    }

    /// A subscription `query`: a mapping, converted to a JSON value.
    private mutating func decodeQuery(_ node: YAMLNode, field: String) -> QueryValue? {
        guard case .mapping = node.content else {
            if node.scalar?.alreadyReported != true {
                report(
                    "\(field): expected a mapping (a Directus query such as { fields: [\"*\"] }), got "
                        + node.kindDescription,
                    at: node.mark
                )
            }
            return nil
        }
        return queryValue(node, field: field)
    }

    private mutating func queryValue(_ node: YAMLNode, field: String) -> QueryValue? {
        switch node.content {
        case .scalar(let scalar):
            if scalar.alreadyReported { return nil }
            switch YAMLCoreSchema.resolve(scalar) {
            case .null: return .null
            case .bool(let value): return .bool(value)
            case .integer(let text): return .number(text)
            case .float(let text?): return .number(text)
            case .float(nil):
                report("\(field): \"\(scalar.text)\" cannot be sent as JSON (quote it to send a string)", at: node.mark)
                return nil
            case .string(let text): return .string(text)
            }
        case .sequence(let items):
            var values: [QueryValue] = []
            for (index, item) in items.enumerated() {
                if let value = queryValue(item, field: "\(field)[\(index)]") { values.append(value) }
            }
            return .array(values)
        case .mapping(let entries):
            var members: [(key: String, value: QueryValue)] = []
            for entry in entries {
                if let value = queryValue(entry.value, field: "\(field).\(entry.key)") {
                    members.append((entry.key, value))
                }
            }
            return .object(members)
        }
    }
}
