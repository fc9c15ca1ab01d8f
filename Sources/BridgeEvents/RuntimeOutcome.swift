/// How `run` ended; the CLI maps it to an exit code.
public enum RuntimeOutcome: Error, Sendable, Equatable {
    /// SIGINT/SIGTERM: drained (or timed out with the state saved). Exit 0.
    case cleanShutdown
    /// Directus rejected the credentials at start-up, or activity mode lacks read access. Exit 77.
    case credentialsRejected(String)
    /// Something in the config cannot work (e.g. an unwritable output file). Exit 78.
    case configurationProblem(String)
    /// An unexpected failure (stdout closed, state could not be saved). Exit 1.
    case failure(String)
}
