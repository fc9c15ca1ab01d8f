public import BridgeJSON
internal import Synchronization

/// The most rows Directus answers one read with: its `QUERY_LIMIT_MAX` (docs/directus-protocol.md §8.6, §8.7).
///
/// Directus refuses a `limit` above it with 400 `INVALID_QUERY` ("\"limit\" must be less than or equal to N"), so a
/// bridge asking for 500 rows a page read nothing at all from a Directus with `QUERY_LIMIT_MAX=100`: the snapshot,
/// the activity log and every item read failed, retried forever. Learned from `/server/info` (`queryLimit.max`, shown
/// to an authenticated user) at start, or from such a refusal; every `limit` the bridge sends is then held to it, and
/// the readers fill their pages with more requests.
public final class RowLimit: Sendable {
    /// The limit; 0 while none is known.
    private let value = Atomic<Int>(0)

    /// No limit known.
    public init() {}

    /// The limit, nil while none is known.
    public var maximum: Int? {
        let current = value.load(ordering: .relaxed)
        return current > 0 ? current : nil
    }

    /// `count` held to the limit (at least 1).
    public func capped(_ count: Int) -> Int { max(1, min(count, maximum ?? count)) }

    /// Takes `queryLimit.max` from a `/server/info` answer's `data` (-1 or absent: no limit); the new limit, if any.
    @discardableResult
    public func learn(info data: JSONValue?) -> Int? {
        guard let max = data?["queryLimit"]?["max"]?.intValue, max > 0 else { return nil }
        value.store(max, ordering: .relaxed)
        return max
    }

    /// Takes the limit a refusal names (`"limit" must be less than or equal to N`); the new limit, if it named one.
    public func learn(refusal error: DirectusError) -> Int? {
        guard error.status == 400, let max = Self.limit(named: error.message), max > 0 else { return nil }
        value.store(max, ordering: .relaxed)
        return max
    }

    /// `query` with a `limit` above the limit lowered to it; `-1` (all) is left as it is: Directus holds it to the
    /// limit itself.
    public func apply(to query: [(String, String)]) -> [(String, String)] {
        guard let maximum else { return query }
        return query.map { name, text in
            guard name == "limit", let asked = Int(text), asked > maximum else { return (name, text) }
            return (name, String(maximum))
        }
    }

    /// The number in Joi's message for a `limit` over the schema's maximum, as Directus words it.
    static func limit(named message: String) -> Int? {
        let marker = "\"limit\" must be less than or equal to "
        guard let range = message.firstRange(of: marker) else { return nil }
        return Int(message[range.upperBound...].prefix { $0.isASCII && $0.isNumber })
    }
}
