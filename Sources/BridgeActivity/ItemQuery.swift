public import BridgeConfig
public import BridgeJSON
internal import BridgeEvents
public import BridgeDirectus

/// How the activity reader reads a subscription's items over REST (docs/directus-protocol.md §8.7): the subscription's
/// `query.fields` and `query.filter` (plus `deep`, `alias` and `search`, which shape or narrow the items the same
/// way), combined with a primary-key condition.
///
/// The primary key must be in every answer to match items to activity rows; when `fields` leaves it out it is
/// asked for too and removed again from `data`, so the event carries exactly the fields the query names.
public struct ItemQuery: Sendable, Equatable {
    /// The collection.
    public var collection: String
    /// Its primary-key field.
    public var primaryKey: String
    /// The fields to read, as sent (nil: Directus's default, every field).
    public var fields: [String]?
    /// Whether `fields` had to be extended with the primary key.
    public var primaryKeyAdded: Bool
    /// The top-level fields the configured `fields` allow out of the bridge (the added primary key is not one).
    public var allowance: FieldAllowance
    /// The subscription's filter, nil when it has none.
    public var filter: JSONValue?
    /// Other query members passed through as REST parameters (`deep`, `alias`, `search`), in a fixed order.
    public var passthrough: [Parameter]

    /// A REST query parameter.
    public struct Parameter: Sendable, Equatable {
        /// The name.
        public var name: String
        /// The value as sent.
        public var value: String
    }

    /// Builds the query of a subscription on `collection` whose primary key is `primaryKey`.
    public init(collection: String, primaryKey: String, query: QueryValue?) {
        self.collection = collection
        self.primaryKey = primaryKey
        var fields = Self.fieldList(query?["fields"])
        allowance = FieldAllowance(fields: fields)
        if var listed = fields, !listed.contains("*"), !listed.contains(primaryKey) {
            listed.append(primaryKey)
            fields = listed
            primaryKeyAdded = true
        } else {
            primaryKeyAdded = false
        }
        self.fields = fields
        filter = query?["filter"].flatMap(Self.json)
        var passthrough: [Parameter] = []
        for name in ["deep", "alias"] {
            if let value = query?[name], let json = Self.json(value) {
                passthrough.append(Parameter(name: name, value: json.serializedString()))
            }
        }
        if case .string(let text)? = query?["search"], !text.isEmpty {
            passthrough.append(Parameter(name: "search", value: text))
        }
        self.passthrough = passthrough
    }

    /// What decides which items a snapshot reads and what their lines hold, as one text: the configured `fields`,
    /// `filter`, `deep`, `alias` and `search` in a fixed order (the members of a filter as configured). A subscription
    /// state keeps it for its snapshot (`SubscriptionCursorState.snapshotQuery`), so that a start can tell the query
    /// was changed since.
    public var fingerprint: String {
        var members: [(String, JSONValue)] = []
        if let listed = primaryKeyAdded ? fields.map({ Array($0.dropLast()) }) : fields {
            members.append(("fields", .array(listed.map { .string($0) })))
        }
        if let filter { members.append(("filter", filter)) }
        for parameter in passthrough { members.append((parameter.name, .string(parameter.value))) }
        return JSONValue.object(JSONObject(members)).serializedString()
    }

    /// Whether the query can leave out items that exist (a filter or a search); without one, a key missing from
    /// an answer is an item that is gone.
    public var narrowsItems: Bool { filter != nil || passthrough.contains { $0.name == "search" } }

    // MARK: - Requests

    /// `GET /items/<collection>` parameters for the items among `keys` that match the filter.
    public func parameters(keys: [String]) -> [(String, String)] {
        let condition: JSONValue = [primaryKey: ["_in": .array(keys.map { .string($0) })]]
        return parameters(condition: condition, extra: [("limit", String(keys.count))])
    }

    /// Parameters for the existence check of `keys`, without the filter: just the primary keys that still exist.
    public func existenceParameters(keys: [String]) -> [(String, String)] {
        let condition: JSONValue = [primaryKey: ["_in": .array(keys.map { .string($0) })]]
        return [
            ("filter", condition.serializedString()), ("fields", primaryKey), ("limit", String(keys.count)),
        ]
    }

    /// Keyset pagination for snapshots: matching items with a primary key after `after`, in key order; the first
    /// page also asks for `meta=filter_count` (the total, for progress logs).
    public func pageParameters(after: JSONValue?, limit: Int) -> [(String, String)] {
        var extra: [(String, String)] = [("sort", primaryKey), ("limit", String(limit))]
        if after == nil { extra.append(("meta", "filter_count")) }
        let condition: JSONValue? = after.map { [primaryKey: ["_gt": $0]] }
        return parameters(condition: condition, extra: extra)
    }

    /// The primary key alone of the first matching item after `after`: how a snapshot names an item too large to
    /// read and goes on after it.
    public func pageKeyParameters(after: JSONValue?) -> [(String, String)] {
        pageParameters(after: after, limit: 1).filter { $0.0 != "fields" && $0.0 != "meta" } + [("fields", primaryKey)]
    }

    private func parameters(condition: JSONValue?, extra: [(String, String)]) -> [(String, String)] {
        var parts: [JSONValue] = []
        if let filter { parts.append(filter) }
        if let condition { parts.append(condition) }
        var result: [(String, String)] = []
        switch parts.count {
        case 0: break
        case 1: result.append(("filter", parts[0].serializedString()))
        default: result.append(("filter", JSONValue.object(["_and": .array(parts)]).serializedString()))
        }
        if let fields { result.append(("fields", fields.joined(separator: ","))) }
        for parameter in passthrough { result.append((parameter.name, parameter.value)) }
        return result + extra
    }

    // MARK: - Shaping answers

    /// The primary key of a read item as text.
    public func key(of item: AnswerItem) -> String? { item.keyString(primaryKey) }

    /// Appends the item as the event's `data` (compact JSON, from its bytes): without the primary key when only the
    /// reader asked for it.
    public func appendShaped(_ item: AnswerItem, to output: inout [UInt8]) {
        item.appendCompact(omitting: primaryKeyAdded ? primaryKey : nil, to: &output)
    }

    /// A revision's snapshot or delta (raw fields, not shaped by the query) cut down to the top-level fields the
    /// query allows (``FieldAllowance``): a delta that wrote only other fields becomes `{}`.
    public func project(_ revision: JSONValue) -> JSONValue {
        allowance.project(revision)
    }

    // MARK: - Reading the configured query

    /// `fields` as a list: a JSON array of names or the REST text form `"id,title"` (§5.1); nil when absent.
    package static func fieldList(_ value: QueryValue?) -> [String]? {
        switch value {
        case .array(let items)?:
            let names = items.compactMap { item -> String? in
                if case .string(let name) = item { return name }
                return nil
            }
            return names.isEmpty ? nil : names
        case .string(let text)?:
            let names = text.split(separator: ",").map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
            return names.isEmpty ? nil : names
        default:
            return nil
        }
    }

    /// A query member as JSON; the REST text form (`"filter":"{…}"`) is parsed.
    package static func json(_ value: QueryValue) -> JSONValue? {
        if case .string(let text) = value {
            return try? JSONValue.parse(text)
        }
        return try? JSONValue.parse(value.jsonText)
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        var slice = self[...]
        while slice.first == " " { slice.removeFirst() }
        while slice.last == " " { slice.removeLast() }
        return String(slice)
    }
}
