public import BridgeJSON
internal import BridgeEvents
internal import BridgeDirectus

/// The top-level fields a subscription's `query.fields` lets leave the bridge (README.md "The event line":
/// nothing outside `query.fields` goes out, not in `data`, not in `delta`, not in a revision snapshot).
///
/// Directus shapes `data` itself when it reads items for the query; `delta` and revision snapshots come from
/// `directus_revisions` unshaped and are cut down to these fields. How each form of a `fields` entry counts:
/// - `*` at the top (`*`, `*.*`, `*.author`): every field.
/// - a dotted path (`author.name`, `author.*`, `sections.item:headings.title`): its top-level field (`author`,
///   `sections`), whose raw value in a revision is a foreign key or a list of them.
/// - a many-to-any scope at the top (`item:headings.title`): the field before the `:` (`item`).
/// - a function (`year(date_created)`, `count(comments)`): nothing; the query asked for a value derived from the
///   field, and the raw field would tell more than that.
/// - any other name, `$`-prefixed ones included: that name, compared byte for byte (as `JSONObject` compares keys).
///
/// Names an `alias` member gives allow nothing either: the raw field behind an alias is not itself in `fields`.
/// No `fields` at all (Directus's default) allows every field.
public struct FieldAllowance: Sendable, Equatable {
    /// Every allowed name, keyed by its `String` value; the array holds the byte-distinct spellings that compare
    /// equal as `String`s (canonically equivalent Unicode), so a lookup can insist on the exact bytes.
    private let names: [String: [String]]?

    /// Every field (no `fields`, or a `*`).
    public static let all = FieldAllowance(names: nil)

    private init(names: [String: [String]]?) {
        self.names = names
    }

    /// The allowance of a `query.fields` list; nil allows every field.
    public init(fields: [String]?) {
        guard let fields else {
            self = .all
            return
        }
        var names: [String: [String]] = [:]
        for entry in fields {
            guard let name = Self.topLevelField(of: entry) else { continue }
            if name == "*" {
                self = .all
                return
            }
            if names[name]?.contains(where: { $0.utf8.elementsEqual(name.utf8) }) != true {
                names[name, default: []].append(name)
            }
        }
        self.init(names: names)
    }

    /// Whether the top-level field `name` may leave the bridge.
    public func allows(_ name: String) -> Bool {
        guard let names else { return true }
        return names[name]?.contains { $0.utf8.elementsEqual(name.utf8) } == true
    }

    /// `value` with only the allowed members; a value that is not an object (which no revision should hold) becomes
    /// an empty object unless every field is allowed, since what it carries cannot be told apart.
    public func project(_ value: JSONValue) -> JSONValue {
        guard names != nil else { return value }
        guard case .object(let object) = value else { return .object(JSONObject()) }
        var projected = JSONObject()
        for member in object where allows(member.key) {
            projected[member.key] = member.value
        }
        return .object(projected)
    }

    /// The top-level field a `fields` entry reads, `"*"` for a wildcard, or nil when it allows no raw field.
    package static func topLevelField(of entry: String) -> String? {
        let path = entry.utf8
        let end = path.firstIndex(of: UInt8(ascii: ".")) ?? path.endIndex
        var top = Substring(entry)[..<end]
        if top.utf8.contains(UInt8(ascii: "(")) { return nil }  // a function: `year(date_created)`
        if let scope = top.utf8.firstIndex(of: UInt8(ascii: ":")) { top = top[..<scope] }  // many-to-any scope
        return top.isEmpty ? nil : String(top)
    }
}
