package import BridgeConfig
internal import BridgeJSON
public import BridgeSystem
package import BridgeEvents
package import BridgeDirectus
public import BridgeActivity
internal import BridgeSinks

/// Manual sorting's part of `run` (directus-protocol.md §14.3): finds the subscribed collections that have a sort
/// field and runs the sort watcher for them; without any it does nothing.
public struct SortService: Sendable {
    /// What the socket reader calls for every `update` (nil when no subscribed collection is sorted).
    public let trigger: SortWakeup?
    private let watcher: SortWatcher?

    /// Nothing to follow.
    public static let none = SortService(trigger: nil, watcher: nil)

    private init(trigger: SortWakeup?, watcher: SortWatcher?) {
        self.trigger = trigger
        self.watcher = watcher
    }

    /// Looks up the sort field of every collection whose subscriptions pass `update` (transport failures are
    /// retried until `stop`: nil when stopped first; a collection whose settings cannot be read is not followed).
    package static func make(
        config: BridgeConfig, routes: [SubscriptionRoute], api: DirectusAPI, sinks: any EventIntake,
        metrics: PipelineMetrics, stop: ShutdownSignal, logger: Logger
    ) async -> SortService? {
        let reconnect = config.directus.reconnect
        var collections: [SortedCollection] = []
        var backoff = Backoff(initialDelay: reconnect.initialDelay, maxDelay: reconnect.maxDelay)
        let updating = routes.filter { $0.events.contains(.update) }
        for name in Set(updating.map(\.collection)).sorted() {
            let found = await retrying(until: stop, backoff: &backoff) { () async throws -> String? in
                do throws(DirectusError) {
                    return try await api.sortField(of: name)
                } catch where !error.isRetriable {
                    logger.debug(
                        "cannot read the collection's settings; manual sorting is not followed",
                        metadata: [LogKey.collection: name, LogKey.error: error.description])
                    return nil
                }
            } failed: { error, delay in
                logger.warning(
                    "Directus unreachable while reading the collection's settings; retrying",
                    metadata: [LogKey.error: "\(error)", LogKey.delay: delay])
                return delay
            }
            guard let found else { return nil }
            guard let sortField = found else { continue }
            let mine = updating.filter { $0.collection == name }
            let subscriptions = mine.compactMap { route -> ActivitySubscription? in
                config.subscriptions.first { $0.uid == route.uid }.map {
                    ActivitySubscription($0, primaryKey: route.primaryKey, among: config.subscriptions)
                }
            }
            collections.append(
                SortedCollection(
                    name: name, primaryKey: mine[0].primaryKey, sortField: sortField, subscriptions: subscriptions,
                    fromActivityLog: mine.allSatisfy { $0.handling == .trigger }))
            logger.info(
                "following manual sorting", metadata: [LogKey.collection: name, "sort_field": sortField])
        }
        guard !collections.isEmpty else { return SortService.none }
        let wakeup = SortWakeup()
        let watcher = SortWatcher(
            collections: collections, source: DirectusSortSource(api: api), sinks: sinks, wakeup: wakeup,
            retryDelay: reconnect.initialDelay, maxRetryDelay: reconnect.maxDelay, metrics: metrics, logger: logger)
        return SortService(trigger: wakeup, watcher: watcher)
    }

    /// Runs the watcher until `stop` (returns at once when nothing is followed).
    public func run(stop: ShutdownSignal) async {
        await watcher?.run(stop: stop)
    }
}
