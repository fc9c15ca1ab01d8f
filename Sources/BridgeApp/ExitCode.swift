/// The process exit codes (the manual page, packaging/directus-bridge.1: EXIT STATUS).
public enum ExitCode: Int32, Sendable, CaseIterable {
    /// Clean shutdown after SIGINT/SIGTERM (drained, state saved); also `validate`/`check` success.
    case success = 0
    /// Unexpected internal failure; also `check` with a failed check.
    case failure = 1
    /// Command-line usage error.
    case usage = 64
    /// Directus rejected the credentials at start-up, or `delivery.mode: activity` without read access.
    case credentialsRejected = 77
    /// Configuration error (file missing, unreadable, invalid YAML, schema violation, undefined variable).
    case configuration = 78
}
