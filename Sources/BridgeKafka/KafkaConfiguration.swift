internal import BridgeSystem
internal import CRdKafka

/// Owns an `rd_kafka_conf_t` until `rd_kafka_new` takes it.
///
/// Every property goes through `rd_kafka_conf_set`, so librdkafka itself validates names and values; a refusal
/// names the property and never repeats a secret value.
final class KafkaConfiguration {
    /// The configuration, or nil once `rd_kafka_new` took ownership (`consume()`).
    private var pointer: OpaquePointer?

    private init(pointer: OpaquePointer) { self.pointer = pointer }

    deinit {
        // Only a configuration that was never handed to a successful rd_kafka_new is still ours to destroy.
        if let pointer { rd_kafka_conf_destroy(pointer) }
    }

    /// A configuration holding `properties`, in order; throws a configuration error naming the first refused one.
    static func make(_ properties: [(key: String, value: String)]) throws(KafkaError) -> KafkaConfiguration {
        guard let raw = rd_kafka_conf_new() else {
            throw KafkaError(kind: .configuration, message: "librdkafka could not allocate a configuration")
        }
        let configuration = KafkaConfiguration(pointer: raw)
        for (key, value) in properties { try configuration.set(key, value) }
        return configuration
    }

    /// Sets one property, turning librdkafka's refusal into an error that names `key` without echoing a secret.
    func set(_ key: String, _ value: String) throws(KafkaError) {
        guard let pointer else { preconditionFailure("configuration used after rd_kafka_new took it") }
        var errorText = [CChar](repeating: 0, count: 512)
        let result = rd_kafka_conf_set(pointer, key, value, &errorText, errorText.count)
        switch result {
        case RD_KAFKA_CONF_OK:
            return
        case RD_KAFKA_CONF_UNKNOWN:
            throw KafkaError(kind: .configuration, message: "unknown librdkafka property \(PeerText.sanitized(key))")
        default:
            let detail = KafkaSettingsText.refusal(errorText, key: key, value: value)
            throw KafkaError(kind: .configuration, message: "invalid value for property \(key)\(detail)")
        }
    }

    /// Lends the configuration to a call that does not take it (`rd_kafka_conf_set_*_cb`).
    func withPointer<T>(_ body: (OpaquePointer) throws -> T) rethrows -> T {
        guard let pointer else { preconditionFailure("configuration used after rd_kafka_new took it") }
        return try body(pointer)
    }

    /// Hands the configuration to `rd_kafka_new` through `body`; if `body` returns non-nil (librdkafka took it),
    /// this object no longer destroys it.
    func consume<T>(_ body: (OpaquePointer) -> T?) -> T? {
        guard let pointer else { preconditionFailure("configuration handed over twice") }
        let result = body(pointer)
        // rd_kafka_new only frees the rd_kafka_conf_t upon success: keep it for deinit otherwise.
        if result != nil { self.pointer = nil }
        return result
    }
}

/// librdkafka's verdict on one property set on its own, as `validate` asks for it: no client is made and nothing
/// connects, librdkafka only checks the name and the value.
package enum KafkaPropertyCheck: Equatable, Sendable {
    /// librdkafka takes it (or it is left to the sink's start, see `check`).
    case accepted
    /// librdkafka has no property of that name.
    case unknown
    /// librdkafka refuses the value; the reason (without the value, none for a secret property) follows.
    case invalidValue(reason: String)

    /// Sets `name` to `value` on a configuration of its own. `plugin.*` properties are accepted unchecked: setting
    /// one loads a shared library, which only the sink's start may do.
    package static func check(name: String, value: String) -> KafkaPropertyCheck {
        if name.hasPrefix("plugin.") { return .accepted }
        guard let raw = rd_kafka_conf_new() else { return .accepted }  // no memory: the sink's start will say
        defer { rd_kafka_conf_destroy(raw) }
        var errorText = [CChar](repeating: 0, count: 512)
        switch rd_kafka_conf_set(raw, name, value, &errorText, errorText.count) {
        case RD_KAFKA_CONF_OK: return .accepted
        case RD_KAFKA_CONF_UNKNOWN: return .unknown
        default: return .invalidValue(reason: KafkaSettingsText.refusal(errorText, key: name, value: value))
        }
    }
}

extension KafkaProducerSettings {
    /// Why librdkafka refuses these settings together (what `rd_kafka_new` checks beyond each property: a CA file
    /// that cannot be read, `max.in.flight.requests.per.connection` beyond what idempotence allows), or nil. It makes
    /// a producer without brokers, which connects nowhere, and destroys it at once; `plugin.*` properties are left
    /// out (setting one loads a library, which the sink's own producer does). Blocks for milliseconds.
    package func refusal() -> String? {
        let properties: [(key: String, value: String)]
        do {
            properties = try librdkafkaProperties().filter {
                $0.key != "bootstrap.servers" && !$0.key.hasPrefix("plugin.")
            }
        } catch {
            return error.message
        }
        let configuration: KafkaConfiguration
        do {
            configuration = try KafkaConfiguration.make(properties + [("log_level", "0")])
        } catch {
            return error.message
        }
        var errorText = [CChar](repeating: 0, count: 512)
        let made = configuration.consume { rd_kafka_new(RD_KAFKA_PRODUCER, $0, &errorText, errorText.count) }
        guard let made else {
            let redactor = Redactor(secrets: secretValues)
            return errorText.withUnsafeBufferPointer { PeerText.string($0.baseAddress, redacting: redactor) }
        }
        rd_kafka_destroy(made)
        return nil
    }
}

/// Wording of librdkafka's refusals, with secrets kept out.
enum KafkaSettingsText {
    /// `: <librdkafka's reason>` with the value cut out (it may be a password), or "" for a secret property,
    /// whose reason is not shown at all.
    static func refusal(_ errorText: [CChar], key: String, value: String) -> String {
        guard !KafkaProducerSettings.isSecret(property: key) else { return "" }
        let redactor = Redactor(secrets: [value])
        let cleaned = errorText.withUnsafeBufferPointer { PeerText.string($0.baseAddress, redacting: redactor) }
        return cleaned.isEmpty ? "" : ": " + cleaned
    }
}
