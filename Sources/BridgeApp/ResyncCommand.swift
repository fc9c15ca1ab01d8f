import BridgeConfig
import BridgeCore
import BridgeActivity
import BridgeSinks

/// `resync SUBSCRIPTION_UID`: records in the cursor store, for every configured sink, that the next run re-snapshots
/// that subscription — a fresh watermark (the newest activity id then), every matching item as a `snapshot` line
/// with new ids, then the stream after the watermark (README.md, "Resync"). For users who must rebuild a downstream
/// copy.
///
/// The request is written beside a running bridge (SQLite WAL) and acted on at its next start: restart the service.
/// A uid that bridge.yaml does not define is refused (exit 64); so is a file in `delivery.mode: live`, which
/// keeps no cursor and takes no snapshots (exit 78), and one with `state.backend: jetstream`, whose cursors this
/// command does not reach yet (exit 78).
enum ResyncCommand {
    static func run(uid: String, configPath: String) -> ExitCode {
        guard let config = BridgeApplication.loadConfig(path: configPath) else { return .configuration }
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
        guard config.state.backend == .local else {
            // The shared cursors are written by the active bridge under compare-and-set; a request written here
            // would reach only this machine's state directory, which a shared-state bridge does not read.
            BridgeApplication.printError(
                "directus-bridge: resync is not supported with state.backend: jetstream yet (the request would not "
                    + "reach the shared cursors)"
            )
            return .configuration
        }
        do {
            let sinks = SinkCatalog.identities(of: config.sinks)
            try CursorDatabase(directory: config.delivery.stateDir, sinks: sinks).requestResync(of: uid, sinks: sinks)
        } catch {
            BridgeApplication.printError("directus-bridge: resync: cannot write the cursor store: \(error)")
            return .failure
        }
        BridgeApplication.printError(
            "resync of \"\(uid)\" recorded in \(config.delivery.stateDir): the next run snapshots it again from a "
                + "fresh watermark, then streams on (restart a running service to start it now)"
        )
        return .success
    }
}
