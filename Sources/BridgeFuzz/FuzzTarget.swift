/// One fuzz target: a name for the command line and a function that runs one input, trapping when an invariant
/// breaks (libFuzzer then saves the input as a crash artifact).
struct FuzzTarget: Sendable {
    /// The name given to `bridge-fuzz` and used for `Fuzz/corpus/<name>`.
    let name: String
    /// What it feeds and what it checks, for `bridge-fuzz --list`.
    let summary: String
    /// Runs one input.
    let run: @Sendable (UnsafeRawBufferPointer) -> Void
}

/// Every target, in the order `scripts/fuzz.sh` runs them.
enum FuzzTargets {
    static let all: [FuzzTarget] = [
        WebSocketFramesTarget.target,
        HandshakeResponseTarget.target,
        JSONScannerTarget.target,
        DirectusMessageTarget.target,
        ActivityRESTTarget.target,
        HTTPHeadersTarget.target,
        ConfigTarget.target,
        MetricsServerTarget.target,
        JetStreamReplyTarget.target,
    ]

    /// The target called `name`.
    static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }
}

/// Traps with `message` when `condition` is false: a broken invariant is a finding, like a crash.
func require(
    _ condition: Bool,
    _ message: @autoclosure () -> String,
    file: StaticString = #fileID,
    line: UInt = #line
) {
    if !condition { fatalError("invariant broken: \(message())", file: file, line: line) }
}
