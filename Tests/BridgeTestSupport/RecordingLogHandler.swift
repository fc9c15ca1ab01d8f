import BridgeSystem
import Synchronization

/// Keeps every log record in memory, so a test can wait for a line that marks a state change it cannot
/// observe otherwise (for example, that a service has noticed its stop signal).
public final class RecordingLogHandler: LogHandler {
    /// One log record as the logger handed it over.
    public struct Record: Sendable {
        /// The record's level.
        public var level: LogLevel
        /// The constant message.
        public var message: String
        /// Merged metadata, each value as the text format writes it.
        public var metadata: [String: String]
        /// Merged metadata, typed.
        public var fields: LogFields
    }

    private let records = Mutex<[Record]>([])

    /// Records every level.
    public let minimumLevel: LogLevel = .trace

    /// Creates an empty handler.
    public init() {}

    /// A logger that writes to this handler.
    public func logger(label: String = "test") -> Logger { Logger(label: label, handler: self) }

    /// Keeps the record.
    public func log(level: LogLevel, message: String, metadata: LogFields, label: String) {
        let record = Record(level: level, message: message, metadata: metadata.mapValues(\.text), fields: metadata)
        records.withLock { $0.append(record) }
    }

    /// Every record so far, oldest first.
    public var all: [Record] { records.withLock { $0 } }

    /// Whether a record with exactly this message was logged.
    public func contains(_ message: String) -> Bool { records.withLock { $0.contains { $0.message == message } } }
}
