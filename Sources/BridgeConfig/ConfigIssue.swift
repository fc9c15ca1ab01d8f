/// One problem in a configuration file, with the position a person should look at.
public struct ConfigIssue: Sendable, Equatable, CustomStringConvertible {
    /// The configuration file path exactly as given (on the command line or to `ConfigLoader`).
    public var path: String
    /// 1-based line.
    public var line: Int
    /// 1-based column (in characters).
    public var column: Int
    /// What is wrong, and where possible how to fix it.
    public var message: String

    /// Creates an issue; a message longer than `maximumMessageLength` (a pasted document echoed as a value) keeps
    /// its beginning, which says where, and its end, which says why.
    public init(path: String, line: Int, column: Int, message: String) {
        self.path = path
        self.line = line
        self.column = column
        self.message = Self.bounded(message)
    }

    /// The longest message an issue prints, in characters.
    public static let maximumMessageLength = 1_000

    private static func bounded(_ message: String) -> String {
        guard message.count > maximumMessageLength else { return message }
        let head = 640
        let tail = 300
        let omitted = message.count - head - tail
        return message.prefix(head) + " … (\(omitted) characters left out) … " + message.suffix(tail)
    }

    /// Creates an issue at `mark`: in the file at `path`, or where the mark's value came from (a variable, a
    /// `--set`).
    package init(path: String, at mark: SourceMark, _ message: String) {
        self.init(path: mark.origin ?? path, line: mark.line, column: mark.column, message: message)
    }

    /// `PATH:LINE:COLUMN: message`, the line `directus-bridge validate` prints.
    public var description: String { "\(path):\(line):\(column): \(message)" }
}

/// A configuration that cannot be used, with every problem found (not just the first).
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The problems, ordered by position in the file; never empty.
    public var issues: [ConfigIssue]

    /// Creates an error from `issues`.
    public init(issues: [ConfigIssue]) {
        self.issues = issues
    }

    /// A configuration error is never worth retrying: the file must be edited first.
    public var isRetriable: Bool { false }

    /// One `PATH:LINE:COLUMN: message` line per issue.
    public var description: String { issues.map(\.description).joined(separator: "\n") }
}
