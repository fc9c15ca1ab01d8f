package import BridgeConfig

extension EventNameTemplate {
    /// A broker sink's name template `key`: the configured text, or `current` (the default) when absent or empty,
    /// checked as `check` does — unless reading it already reported a problem (a list, a failed interpolation).
    package static func decode<Failure: Error>(
        _ current: String, key: String, _ decoder: inout ConfigDecoder, _ map: MappingView, refusal: String,
        validate: (String) throws(Failure) -> Void
    ) -> String {
        let text = decoder.string(map, key) ?? current
        if map[key].map({ $0.scalar.map { !$0.alreadyReported } ?? false }) ?? true {
            check(text, key: key, &decoder, map, refusal: refusal, validate: validate)
        }
        return text
    }

    /// Reports a broker sink's `key` (`topic`, `subject`, holding `text`, or its default when absent) whose template
    /// names an unknown placeholder, or whose rendering `validate` refuses (then as `"<template>" <refusal>`): for a
    /// sample event first, then for every collection and event the sink takes (`decoder.sinkScope`). Directus takes
    /// any collection name its database takes (spaces, letters beyond ASCII, `*`), and a name the broker refuses
    /// would have every event of that collection rejected and passed over at run time.
    private static func check<Failure: Error>(
        _ text: String, key: String, _ decoder: inout ConfigDecoder, _ map: MappingView, refusal: String,
        validate: (String) throws(Failure) -> Void
    ) {
        let mark = map[key]?.mark ?? map.mark
        let template = EventNameTemplate(text: text)
        if let unknown = template.unknownPlaceholder {
            decoder.report(
                "\(map.field(key)): unknown placeholder \"\(unknown)\" (use {collection} and {event})", at: mark)
            return
        }
        func refuses(_ name: String) -> Bool {
            do {
                try validate(name)
                return false
            } catch {
                return true
            }
        }
        if refuses(template.render(collection: "articles", event: "update")) {
            decoder.report("\(map.field(key)): \"\(text)\" \(refusal)", at: mark)
            return
        }
        for collection in decoder.sinkScope.collections {
            let refused = decoder.sinkScope.events.lazy
                .map { template.render(collection: collection, event: $0.rawValue) }
                .first(where: refuses)
            guard let refused else { continue }
            decoder.report(
                "\(map.field(key)): \"\(text)\" gives \"\(refused)\" for collection \"\(collection)\", which \(refusal)"
                    + " (write the \(key) without {collection}, or leave the collection out of this sink's collections)",
                at: mark)
        }
    }
}
