import BridgeConfig
import BridgeCore
import BridgeSinks
import BridgeSystem

/// `resync SUBSCRIPTION_UID [--sink SINK]`: records in the cursor store, for every configured sink or the one named,
/// that the subscription is snapshotted again — a fresh watermark (the newest activity id then), every matching
/// item as a `snapshot` line with new ids, then the stream after the watermark (README.md, "Resync"). For users who
/// must rebuild a downstream copy.
///
/// The request is written beside a running bridge (SQLite WAL), which acts on it within seconds
/// (`ResyncRequestWatcher`); a stopped one acts on it at its next start. With `state.backend: jetstream` it goes
/// into the shared bucket, and the active bridge acts on it within seconds. A uid or sink that bridge.yaml does not
/// define is refused (exit 64); so is a file in `delivery.mode: live`, which keeps no cursor and takes no snapshots
/// (exit 78).
enum ResyncCommand {
    static func run(uid: String, sink: String?, configPath: ConfigSource) async -> ExitCode {
        // Never contacts Directus: its section (and the secrets only it uses) need not resolve.
        guard let config = BridgeApplication.loadConfig(path: configPath, scope: .withoutDirectus) else {
            return .configuration
        }
        let uids = config.subscriptions.map(\.uid)
        guard uids.contains(uid) else {
            BridgeApplication.printError(
                "directus-bridge: resync: unknown subscription uid \"\(uid)\""
                    + Suggestion.hint(for: uid, in: uids) + " (\(configPath) defines: \(uids.joined(separator: ", ")))"
            )
            return .usage
        }
        guard config.delivery.mode != .live else {
            BridgeApplication.printError(
                "directus-bridge: resync needs delivery.mode activity or auto: live mode keeps no cursor and takes "
                    + "no snapshots"
            )
            return .configuration
        }
        let configured = SinkCatalog.identities(of: config.sinks)
        var targets = configured
        if let sink {
            let id = DeadLetterCommandRunner.resolveSink(sink, configured: configured)
            guard configured.contains(id) else {
                BridgeApplication.printError(
                    "directus-bridge: resync: no sink \"\(sink)\" in \(configPath) (its sinks: "
                        + "\(configured.joined(separator: ", ")), or their positions 0–\(configured.count - 1))")
                return .usage
            }
            targets = [id]
        }
        let outcome = await StateBackends.make(config).requestResync(
            uid: uid, sinks: sink == nil ? nil : targets, named: sink, configured: configured,
            renames: SinkCatalog.renames(of: config.sinks))
        switch outcome {
        case .done(let message):
            BridgeApplication.printError(message)
            return .success
        case .failed(let message):
            BridgeApplication.printError(message)
            return .failure
        case .configurationProblem(let message):
            BridgeApplication.printError(message)
            return .configuration
        }
    }
}
