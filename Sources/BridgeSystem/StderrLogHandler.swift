import Synchronization

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// How log lines are rendered on stderr (`log.format`).
public enum LogFormat: String, Sendable {
    /// Aligned text for people; colour only when stderr is a terminal.
    case text
    /// One JSON object per line: `time`, `level`, `logger`, `message`, `fields` (typed values, docs/configuration.md
    /// "Log fields").
    case json
}

/// Writes log lines to a file descriptor (stderr by default), one `write(2)` per line so lines never interleave.
///
/// Secrets registered with the handler are redacted from every line, whatever the source.
public final class StderrLogHandler: LogHandler {
    /// Lines below this level are dropped.
    public let minimumLevel: LogLevel
    private let format: LogFormat
    private let colour: Bool
    private let fd: Int32
    private let redactor: Mutex<Redactor>
    private let jsonCopy: LogCopyFile?
    /// Held while a line goes to stderr and its copy, so that both receive the lines of all threads in one order.
    private let copying = Mutex(())

    /// Creates a handler. `colour` defaults to whether `fd` is a terminal (text format only); every line also goes to
    /// `jsonCopy` as JSON, whatever `format`.
    public init(
        level: LogLevel,
        format: LogFormat,
        secrets: [String] = [],
        fd: Int32 = 2,
        colour: Bool? = nil,
        jsonCopy: LogCopyFile? = nil
    ) {
        self.minimumLevel = level
        self.format = format
        self.jsonCopy = jsonCopy
        self.fd = fd
        self.colour = format == .text && (colour ?? (isatty(fd) == 1))
        self.redactor = Mutex(Redactor(secrets: secrets))
    }

    /// Adds a secret learned at run time for the life of the handler (a `check` run's tokens).
    public func addSecret(_ secret: String) {
        redactor.withLock { $0.add(secret) }
    }

    /// Hides a rotating secret (a refreshed token) in place of the older ones of its kind (`Redactor.rotate`).
    public func rotateSecret(_ secret: String, kind: Redactor.Rotating) {
        redactor.withLock { $0.rotate(secret, kind: kind) }
    }

    /// At most this many UTF-8 bytes of the message and of each field value are written: a value may carry a peer's
    /// text (an error message Directus sent, a body excerpt), which must not make a line megabytes long.
    public static let maximumValueLength = 2048

    /// Renders and writes one record. Secrets are hidden in the raw message and values, before anything is escaped
    /// (escaped, a secret with `"` or `\` no longer matches) or cut (a cut could keep half of one); control characters
    /// become spaces, so that no value can end the line or move the terminal's cursor.
    public func log(level: LogLevel, message: String, metadata: LogFields, label: String) {
        let (safeMessage, safeMetadata) = redactor.withLock { redactor in
            (Self.shown(message, redactor), metadata.mapValues { Self.shown($0, redactor) })
        }
        let time = Timestamp.now()
        let line = render(level: level, message: safeMessage, metadata: safeMetadata, label: label, at: time)
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        guard let jsonCopy else {
            FileDescriptorWriter.writeAll(fd: fd, bytes: bytes)
            return
        }
        var copy = Array(
            renderJSON(level: level, message: safeMessage, metadata: safeMetadata, label: label, time: time).utf8
        )
        copy.append(0x0A)
        copying.withLock { _ in
            FileDescriptorWriter.writeAll(fd: fd, bytes: bytes)
            if let failure = jsonCopy.append(copy) { reportReopenFailure(failure, of: jsonCopy, at: time) }
        }
    }

    /// Says on stderr only (the copy stays on the file opened before) that a SIGHUP could not reopen the copy.
    private func reportReopenFailure(_ failure: any Error, of copy: LogCopyFile, at time: Timestamp) {
        let metadata: LogFields = redactor.withLock { redactor in
            [
                LogKey.path: .string(Self.shown(copy.path, redactor)),
                LogKey.error: .string(Self.shown("\(failure)", redactor)),
            ]
        }
        let message = "cannot reopen the JSON log copy, writing on to the file opened before"
        var line = Array(render(level: .warning, message: message, metadata: metadata, label: "log", at: time).utf8)
        line.append(0x0A)
        FileDescriptorWriter.writeAll(fd: fd, bytes: line)
    }

    /// Renders a line without writing it (used by tests).
    public func render(level: LogLevel, message: String, metadata: LogFields, label: String, at time: Timestamp)
        -> String
    {
        switch format {
        case .json: renderJSON(level: level, message: message, metadata: metadata, label: label, time: time)
        case .text: renderText(level: level, message: message, metadata: metadata, label: label, time: time)
        }
    }

    private func renderJSON(level: LogLevel, message: String, metadata: LogFields, label: String, time: Timestamp)
        -> String
    {
        var bytes: [UInt8] = Array("{\"time\":\"".utf8)
        time.appendRFC3339(to: &bytes)
        bytes.append(contentsOf: Array("\",\"level\":".utf8))
        appendJSONString(level.description, to: &bytes)
        bytes.append(contentsOf: Array(",\"logger\":".utf8))
        appendJSONString(label, to: &bytes)
        bytes.append(contentsOf: Array(",\"message\":".utf8))
        appendJSONString(message, to: &bytes)
        bytes.append(contentsOf: Array(",\"fields\":{".utf8))
        for (index, key) in metadata.keys.sorted().enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendJSONString(key, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            (metadata[key] ?? .string("")).appendJSON(to: &bytes)
        }
        bytes.append(contentsOf: Array("}}".utf8))
        return String(decoding: bytes, as: UTF8.self)
    }

    private func renderText(level: LogLevel, message: String, metadata: LogFields, label: String, time: Timestamp)
        -> String
    {
        let levelName = level.description.uppercased()
        let paddedLevel = levelName + String(repeating: " ", count: max(0, 5 - levelName.count))
        var line = time.rfc3339 + " "
        if colour {
            line += Self.colourCode(level) + paddedLevel + "\u{1B}[0m"
        } else {
            line += paddedLevel
        }
        line += " " + message
        if !metadata.isEmpty {
            let padding = max(1, 44 - message.count)
            line += String(repeating: " ", count: padding)
            line += metadata.keys.sorted().map { key in "\(key)=\(Self.quoteIfNeeded(metadata[key]?.text ?? ""))" }
                .joined(separator: " ")
        }
        return line
    }

    private static func shown(_ value: String, _ redactor: Redactor) -> String {
        PeerText.sanitized(value, redacting: redactor, maximumLength: maximumValueLength)
    }

    /// Only text can carry a secret or a peer's control characters; numbers and flags pass as they are.
    private static func shown(_ value: LogValue, _ redactor: Redactor) -> LogValue {
        guard case .string(let text) = value else { return value }
        return .string(shown(text, redactor))
    }

    private static func colourCode(_ level: LogLevel) -> String {
        switch level {
        case .trace, .debug: "\u{1B}[2m"
        case .info, .notice: "\u{1B}[32m"
        case .warning: "\u{1B}[33m"
        case .error, .critical: "\u{1B}[31m"
        }
    }

    private static func quoteIfNeeded(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.utf8.contains { $0 == 32 || $0 == 34 || $0 == 61 || $0 < 32 }
        guard needsQuotes else { return value }
        var bytes: [UInt8] = []
        appendJSONString(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
