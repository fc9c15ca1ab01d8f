internal import BridgeConfig
import BridgeMQTT

/// The retained per-item topic of an MQTT sink (`state_topic`, e.g. `directus/state/{collection}/{key}`):
/// `{collection}` and `{key}` are replaced per event. The key is one topic level whatever it holds: `%`, `/`, `+`,
/// `#` and NUL in it are written as `%25`, `%2F`, `%2B`, `%23` and `%00`, so a key never splits a level, never
/// makes a wildcard (which the broker would refuse) and two keys never share a topic.
package struct MQTTStateTopic: Sendable, Equatable {
    /// The placeholders a state topic may hold.
    package static let placeholders = ["{collection}", "{key}"]

    /// The template as written.
    package let text: String

    package init(text: String) { self.text = text }

    /// The topic of item `key` of `collection`.
    package func render(collection: String, key: String) -> String {
        text.replacing("{collection}", with: collection).replacing("{key}", with: Self.level(key))
    }

    /// `key` as one topic level (see the type's comment).
    static func level(_ key: String) -> String {
        guard key.utf8.contains(where: { Self.escaped.keys.contains($0) }) else { return key }
        var text = ""
        for scalar in key.unicodeScalars {
            if scalar.isASCII, let escape = Self.escaped[UInt8(scalar.value)] {
                text += escape
            } else {
                text.unicodeScalars.append(scalar)
            }
        }
        return text
    }

    private static let escaped: [UInt8: String] = [
        UInt8(ascii: "%"): "%25", UInt8(ascii: "/"): "%2F", UInt8(ascii: "+"): "%2B", UInt8(ascii: "#"): "%23",
        0: "%00",
    ]

    /// Reports `text` (the value of `key`) when it names a placeholder other than `{collection}` and `{key}`, lacks
    /// `{key}` (or `{collection}` for a sink of several collections), or renders a topic MQTT refuses for a sample
    /// item of every collection the sink takes.
    static func check(_ text: String, key: String, _ decoder: inout ConfigDecoder, _ map: MappingView) {
        let mark = map[key]?.mark ?? map.mark
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            let tail = rest[open...]
            let close = tail.firstIndex(of: "}")
            let candidate = close.map { String(tail[...$0]) } ?? String(tail)
            guard close != nil, placeholders.contains(candidate) else {
                decoder.report(
                    "\(map.field(key)): unknown placeholder \"\(candidate)\" (use {collection} and {key})", at: mark)
                return
            }
            rest = tail[tail.index(after: close!)...]
        }
        // One retained message per topic: each item needs a topic of its own.
        guard text.contains("{key}") else {
            decoder.report("\(map.field(key)) must name {key}: it keeps each item's latest state apart", at: mark)
            return
        }
        guard text.contains("{collection}") || decoder.sinkScope.collections.count <= 1 else {
            decoder.report(
                "\(map.field(key)) must name {collection}: this sink takes several collections, whose items may share"
                    + " a key",
                at: mark)
            return
        }
        let template = MQTTStateTopic(text: text)
        for collection in ["articles"] + decoder.sinkScope.collections {
            let topic = template.render(collection: collection, key: "1")
            do throws(MQTTError) {
                try MQTTTopic.validate(topic)
            } catch {
                decoder.report(
                    "\(map.field(key)): \"\(text)\" gives \"\(topic.prefix(80))\" for collection \"\(collection)\","
                        + " which is not a usable MQTT topic (1 to 65535 bytes, no + or #)",
                    at: mark)
                return
            }
        }
    }
}
