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
        do {
            let lease = try await SharedBucketAccess.withBucket(
                state, client: "directus-bridge-check", logger: logger
            ) { store, keys in try store.map { try $0.entry(keys.lease) } }
            guard let lease else {
                return .ok(name, "the bucket does not exist yet; the first bridge to start creates it")
            }
            return .ok(name, SharedStateReader.describeLease(lease))
        } catch let error as SharedBucketAccess.Unreachable {
            return .fail(
                name, error.description,
                remedy: "check state.servers and that nats-server runs, with JetStream, and is reachable from this host")
        } catch {
            return .fail(name, "cannot read the bucket: \(error)", remedy: "see the error")
        }
    }
}
