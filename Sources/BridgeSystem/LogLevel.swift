/// How important a log line is. Mirrors swift-log's seven levels so a later swap is mechanical.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    case trace, debug, info, notice, warning, error, critical

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The lower-case name used in config (`log.level`) and in JSON log lines.
    public var description: String {
        switch self {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warn"
        case .error: "error"
        case .critical: "critical"
        }
    }

    /// Parses the config spelling (`debug`, `info`, `warn`/`warning`, `error`, …).
    public init?(configName: String) {
        switch configName.lowercased() {
        case "trace": self = .trace
        case "debug": self = .debug
        case "info": self = .info
        case "notice": self = .notice
        case "warn", "warning": self = .warning
        case "error": self = .error
        case "critical": self = .critical
        default: return nil
        }
    }
}
