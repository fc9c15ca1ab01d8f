/// Metadata as call sites pass it: dotted keys (see `LogKey`) to plain values (`String`, `Int`, `Bool`, `Duration`…).
public typealias LogMetadata = [String: any LogValueConvertible]

/// Metadata as handlers receive it: each value typed (`LogValue`).
public typealias LogFields = [String: LogValue]

/// Receives finished log records. Implementations must be thread-safe.
public protocol LogHandler: Sendable {
    /// Lines below this level are dropped before they are formatted.
    var minimumLevel: LogLevel { get }
    /// Writes one record. `metadata` already merges the logger's and the call's metadata.
    func log(level: LogLevel, message: String, metadata: LogFields, label: String)
}

/// A small value-type logger shaped like swift-log's `Logger`: constant messages, data in metadata.
///
/// Loggers are passed in, never global. Logs go to stderr only, because stdout carries data.
public struct Logger: Sendable {
    /// Names the component that logs (`directus.session`, `sink.webhook`, …).
    public var label: String
    /// Metadata added to every line of this logger.
    public var metadata: LogMetadata
    /// Where records go.
    public let handler: any LogHandler

    /// Creates a logger writing to `handler`.
    public init(label: String, handler: any LogHandler, metadata: LogMetadata = [:]) {
        self.label = label
        self.handler = handler
        self.metadata = metadata
    }

    /// A logger that discards everything (tests and tools that need silence).
    public static var silent: Logger { Logger(label: "silent", handler: NullLogHandler()) }

    /// Reads or sets one metadata value of this logger.
    public subscript(metadataKey key: String) -> (any LogValueConvertible)? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// A copy with a different label and extra metadata.
    public func child(label: String, metadata extra: LogMetadata = [:]) -> Logger {
        var copy = self
        copy.label = label
        copy.metadata.merge(extra) { _, new in new }
        return copy
    }

    /// Whether a line at `level` would be written (use to skip building costly metadata).
    public func isEnabled(_ level: LogLevel) -> Bool { level >= handler.minimumLevel }

    /// Logs `message` at `level` with `extra` metadata.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, metadata extra: LogMetadata = [:]) {
        guard level >= handler.minimumLevel else { return }
        var merged = metadata.mapValues(\.logValue)
        for (key, value) in extra { merged[key] = value.logValue }
        handler.log(level: level, message: message(), metadata: merged, label: label)
    }

    /// Logs at trace level.
    public func trace(_ message: @autoclosure () -> String, metadata: LogMetadata = [:]) {
        log(.trace, message(), metadata: metadata)
    }
    /// Logs at debug level.
    public func debug(_ message: @autoclosure () -> String, metadata: LogMetadata = [:]) {
        log(.debug, message(), metadata: metadata)
    }
    /// Logs at info level: state changes, never one line per event.
    public func info(_ message: @autoclosure () -> String, metadata: LogMetadata = [:]) {
        log(.info, message(), metadata: metadata)
    }
    /// Logs at notice level.
    public func notice(_ message: @autoclosure () -> String, metadata: LogMetadata = [:]) {
        log(.notice, message(), metadata: metadata)
    }
    /// Logs at warning level. Warnings are logged once, where they are handled.
    public func warning(_ message: @autoclosure () -> String, metadata: LogMetadata = [:]) {
        log(.warning, message(), metadata: metadata)
    }
    /// Logs at error level. Errors are logged once, where they are handled.
    public func error(_ message: @autoclosure () -> String, metadata: LogMetadata = [:]) {
        log(.error, message(), metadata: metadata)
    }
    /// Logs at critical level.
    public func critical(_ message: @autoclosure () -> String, metadata: LogMetadata = [:]) {
        log(.critical, message(), metadata: metadata)
    }
}

/// Discards every record.
public struct NullLogHandler: LogHandler {
    /// Creates the handler.
    public init() {}
    /// Above every real level, so nothing is formatted.
    public var minimumLevel: LogLevel { .critical }
    /// Does nothing.
    public func log(level: LogLevel, message: String, metadata: LogFields, label: String) {}
}
