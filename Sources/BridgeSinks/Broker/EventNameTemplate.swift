internal import BridgeJSON
package import BridgeEvents

/// A topic or subject template of a broker sink (`directus.{collection}.{event}`): `{collection}` and `{event}` are
/// replaced per event; everything else is literal.
///
/// Rendering caches one name per collection and event, so the hot path does no string building after the first
/// event of each pair.
package struct EventNameTemplate: Sendable, Equatable {
    /// The placeholders a template may hold.
    package static let placeholders = ["{collection}", "{event}"]

    /// The template as written.
    package let text: String

    /// The name for `collection` and `event`.
    package func render(collection: String, event: String) -> String {
        text.replacing("{collection}", with: collection).replacing("{event}", with: event)
    }

    /// A `{…}` in the template that is not a placeholder (a typo such as `{colection}`), if any.
    package var unknownPlaceholder: String? {
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            let tail = rest[open...]
            guard let close = tail.firstIndex(of: "}") else { return String(tail) }
            let candidate = String(tail[...close])
            if !Self.placeholders.contains(candidate) { return candidate }
            rest = tail[tail.index(after: close)...]
        }
        return nil
    }

    /// The names rendered so far, per collection and event.
    package final class Cache {
        private let template: EventNameTemplate
        private var names: [String: [ChangeEvent: String]] = [:]
        /// The name rendered last: a batch's events mostly share collection and kind (no hashing per event).
        private var last: (collection: String, event: ChangeEvent, name: String)?

        package init(_ template: EventNameTemplate) { self.template = template }

        /// The name for `event`'s collection and kind.
        package func name(for event: EncodedEvent) -> String {
            if let last, last.event == event.event, last.collection == event.collection { return last.name }
            let name = names[event.collection]?[event.event] ?? {
                let name = template.render(collection: event.collection, event: event.event.rawValue)
                if names.count < 10_000 { names[event.collection, default: [:]][event.event] = name }
                return name
            }()
            last = (event.collection, event.event, name)
            return name
        }
    }
}
