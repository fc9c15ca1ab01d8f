import BridgeTestSupport
import Foundation

/// Runs `directus-bridge check --config bridge.yaml <arguments>` in `directory` (60 s at most) and returns its exit
/// status and its first line containing `marker` (the sink's check name, e.g. `redis cache redis://`).
func sinkCheckLine(in directory: URL, _ marker: String, _ arguments: [String] = []) throws
    -> (code: Int32?, line: String)
{
    let run = try BridgeProcess(arguments: ["check", "--config", "bridge.yaml"] + arguments, directory: directory)
    let code = run.waitForExit(timeout: 60)
    return (code, run.lines.first { $0.contains(marker) } ?? "missing: \(run.lines)")
}
