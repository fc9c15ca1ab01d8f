package import BridgeConfig

extension EventNameTemplate {
    /// Reports a broker sink's `key` (`topic`, `subject`) whose template names an unknown placeholder, or whose
    /// rendering for a sample event `validate` refuses (then as `"<template>" <refusal>`).
    package static func check<Failure: Error>(
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
        do {
            try validate(template.render(collection: "articles", event: "update"))
        } catch {
            decoder.report("\(map.field(key)): \"\(text)\" \(refusal)", at: mark)
        }
    }
}
