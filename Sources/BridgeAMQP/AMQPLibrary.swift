internal import CRabbitMQ

/// The librabbitmq the bridge runs with, for `--version`.
package enum AMQPLibrary {
    /// The library's name as `--version` shows it.
    package static let name = "librabbitmq"
    /// The version the library reports at run time (`0.11.0`).
    package static var version: String { amqp_version().map { String(cString: $0) } ?? "unknown" }
}
