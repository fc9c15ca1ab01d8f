internal import BridgeActivity
internal import BridgeConfig
internal import BridgeEvents
internal import BridgeJSON
internal import BridgeNATS
internal import BridgeSystem

extension BridgeCheck {
    /// `state.backend: jetstream`: the state servers answer, the bucket exists (or will be created by the first
    /// bridge), and who holds the lease. Nil with local state. Never creates the bucket or writes a key.
    func checkSharedState() async -> CheckResult? {
        let state = config.state
        guard state.backend == .jetstream else { return nil }
        let name = "shared state \(state.bucket)/\(state.name)"
        let connection: NATSConnection
        do {
            connection = try await NATSConnection.connect(
                settings: NATSSettings(servers: state.servers, name: "directus-bridge-check"), logger: logger)
        } catch {
            return .fail(
                name, "cannot connect to \(state.shownServers): \(error)",
                remedy: "check state.servers and that nats-server runs, with JetStream, and is reachable from this host")
        }
        var settings = KeyValueSettings(bucket: state.bucket)
        settings.createIfMissing = false
        let result: CheckResult
        do {
            let store = try await KeyValueStore.open(connection: connection, settings: settings)
            let key = SharedStateKeys(name: state.name).lease
            let entry = try await BlockingExecutor.shared.perform { try store.entry(key) }
            result = .ok(name, Self.describeLease(entry))
        } catch let error as NATSError where error.isNotFound {
            result = .ok(name, "the bucket does not exist yet; the first bridge to start creates it")
        } catch {
            result = .fail(name, "cannot read the bucket: \(error)", remedy: "see the error")
        }
        await connection.close()
        return result
    }

    private static func describeLease(_ entry: KeyValueEntry?) -> String {
        guard let entry, let value = entry.value else { return "reachable; the lease is free (no bridge active)" }
        let parsed = try? JSONValue.parse(value)
        let holder = parsed?["holder"]?.stringValue.map { PeerText.sanitized($0, maximumLength: 120) } ?? "an unknown holder"
        let renewed = parsed?["renewed"]?.stringValue.map { PeerText.sanitized($0, maximumLength: 120) } ?? "?"
        return "reachable; lease held by \(holder) (renewed \(renewed) by its clock, revision \(entry.revision))"
    }
}
