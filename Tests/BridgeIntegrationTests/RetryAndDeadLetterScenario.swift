import BridgeTestSupport
import Foundation

/// An activity-mode bridge.yaml that makes a bridge log and count most of what it can: a snapshot of `articles`, an
/// NDJSON sink on stdout and a webhook sink `hook` whose receiver answers the first attempt 500 (retried after 100 ms)
/// and the second 410 (dead-lettered), the rest 2xx; stats lines and /metrics on. Scripts `receiver` accordingly.
func retryAndDeadLetterConfig(emulator: Emulator, receiver: WebhookReceiver) throws -> String {
    try receiver.script(steps: [["status": 500], ["status": 410]])
    let sinks =
        "  - type: ndjson\n    path: \"-\"\n"
        + webhookSink(receiver.hookURL(), "name: hook\nretry_schedule: [100ms]\nmax_attempts: 3")
    return webhookConfig(url: emulator.url, sinks: sinks, operations: true, mode: "activity")
        .replacingOccurrences(of: "  - collection: articles\n", with: "  - collection: articles\n    snapshot: true\n")
}
