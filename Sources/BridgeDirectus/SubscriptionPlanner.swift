public import BridgeConfig
public import BridgeJSON
public import BridgeSystem
public import BridgeEvents

/// Turns the configured subscriptions into socket routes: looks up each collection's primary key and builds the
/// `subscribe` messages (docs/directus-protocol.md §5.1).
public enum SubscriptionPlanner {
    /// The `subscribe` message for a configured subscription: `uid` as configured, the query passed through.
    ///
    /// No `event` is set even when only some events are wanted: with `event` Directus skips the subscribe-time
    /// permission check (§5.2 step 4), so a forbidden collection would fail silently; events are filtered here.
    public static func subscribeMessage(for subscription: SubscriptionConfig) -> String {
        var bytes: [UInt8] = Array(#"{"type":"subscribe","collection":"#.utf8)
        appendJSONString(subscription.collection, to: &bytes)
        bytes += Array(#","uid":"#.utf8)
        appendJSONString(subscription.uid, to: &bytes)
        if let query = subscription.query {
            bytes += Array(#","query":"#.utf8)
            query.appendJSON(to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The events a subscription passes on (empty config list = all three).
    public static func events(of subscription: SubscriptionConfig) -> Set<ChangeEvent> {
        let configured = subscription.events.compactMap { ChangeEvent(rawValue: $0.rawValue) }
        return configured.isEmpty ? [.create, .update, .delete] : Set(configured)
    }

    /// Looks up primary keys (retrying transport failures until `stop`), and builds one route per subscription.
    /// `handling(subscription)` says whether its events are emitted at once or trigger the activity reader.
    /// Returns nil when stopped before finishing.
    public static func plan(
        subscriptions: [SubscriptionConfig], api: DirectusAPI, handling: (SubscriptionConfig) -> SubscriptionRoute.Handling,
        retryDelay: Duration, stop: ShutdownSignal, logger: Logger
    ) async -> [SubscriptionRoute]? {
        var primaryKeys: [String: String] = [:]
        var backoff = Backoff(initialDelay: retryDelay, maxDelay: max(retryDelay, .seconds(30)))
        for collection in Set(subscriptions.map(\.collection)).sorted() {
            let found = await retrying(until: stop, backoff: &backoff) { () async throws -> String in
                do throws(DirectusError) {
                    return try await api.primaryKey(of: collection)
                } catch where !error.isRetriable {
                    // Usually the collection is unknown or not readable: the subscribe will fail with Directus's
                    // own error, logged per subscription. `id` is Directus's default primary key name.
                    logger.warning(
                        "cannot read the schema of the collection; assuming primary key \"id\"",
                        metadata: [LogKey.collection: collection, LogKey.error: error.description])
                    return "id"
                }
            } failed: { error, delay in
                logger.warning(
                    "Directus unreachable while reading the schema; retrying",
                    metadata: [LogKey.error: "\(error)", LogKey.delay: delay])
                return delay
            }
            guard let found else { return nil }
            primaryKeys[collection] = found
        }
        return subscriptions.map { subscription in
            SubscriptionRoute(
                uid: subscription.uid, collection: subscription.collection,
                primaryKey: primaryKeys[subscription.collection] ?? "id", events: events(of: subscription),
                handling: handling(subscription), subscribeMessage: subscribeMessage(for: subscription))
        }
    }
}
