import BridgeConfig
import BridgeCore
import BridgeActivity
import BridgeNATS
import BridgeSinks
import BridgeStore
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
        if config.state.backend == .jetstream {
            return await requestShared(uid: uid, sinks: sink == nil ? nil : targets, config: config)
        }
        do {
            // The names' migration runs here too: opening the file removes progress under ids no longer configured.
            try CursorDatabase(
                directory: config.delivery.stateDir, sinks: configured,
                renames: SinkCatalog.renames(of: config.sinks))
                .requestResync(of: uid, sinks: targets)
        } catch let error as SQLiteError where error.isUnusableFile {
            // cursor.db read-only or damaged: the operator must act, as when `run` refuses it (exit 78).
            BridgeApplication.printError("directus-bridge: resync: cannot write the cursor store: \(error.reason)")
            return .configuration
        } catch let error as UnsafePathError {
            // A state_dir another user controls: refused as `run` refuses it (exit 78).
            BridgeApplication.printError("directus-bridge: resync: delivery.state_dir: \(error)")
            return .configuration
        } catch {
            BridgeApplication.printError("directus-bridge: resync: cannot write the cursor store: \(error)")
            return .failure
        }
        BridgeApplication.printError(
            "resync of \"\(uid)\"\(sink.map { " for sink \($0)" } ?? "") recorded in \(config.delivery.stateDir): a "
                + "running bridge snapshots it again from a fresh watermark within seconds, then streams on (a "
                + "stopped one at its next start)"
        )
        return .success
    }

    /// `state.backend: jetstream`: the request goes into the bucket (`<name>.resync.<uid>`); the active bridge starts
    /// a new term for it within seconds (with none active, the next one to start takes it) and snapshots the
    /// subscription again for every sink.
    private static func requestShared(uid: String, sinks: [String]?, config: BridgeConfig) async -> ExitCode {
        let state = config.state
        do {
            let recorded = try await SharedBucketAccess.withBucket(
                state, client: "directus-bridge-resync", logger: .silent
            ) { store, keys in try store.map { try SharedResyncRequest.record(uid: uid, sinks: sinks, in: $0, keys: keys) } != nil }
            guard recorded else {
                BridgeApplication.printError(
                    "directus-bridge: resync: the bucket \(state.bucket) does not exist yet: no bridge has started, "
                        + "and the first one starts each subscription as configured")
                return .failure
            }
        } catch {
            BridgeApplication.printError("directus-bridge: resync: cannot write to the shared state: \(error)")
            return .failure
        }
        BridgeApplication.printError(
            "resync of \"\(uid)\" recorded in the shared state (bucket \(state.bucket), name \(state.name)): the "
                + "active bridge snapshots it again from a fresh watermark within seconds, then streams on (with none "
                + "active, the next one to start does)")
        return .success
    }
}
