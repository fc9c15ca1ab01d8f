internal import CRdKafka

/// The version of librdkafka this process runs with, as the library reports it:
/// `rd_kafka_version_str()`, the version linked at run time (`--version` shows it), not the headers' at build time.
package enum KafkaLibrary {
    /// The library's name as `--version` shows it.
    package static let name = "librdkafka"
    /// The version text (`1.2.3`).
    package static var version: String { String(cString: rd_kafka_version_str()) }
}
