public import BridgeConfig
public import BridgeSystem
public import BridgeEvents
public import BridgeDirectus

/// The delivery mode in force once `auto` is resolved and access is checked.
public struct DeliveryPlan: Sendable, Equatable {
    /// `activity` or `live` (never `auto`).
    public var mode: DeliveryMode
    /// Subscriptions read from the activity log (the others emit their socket events directly).
    public var activityUIDs: Set<String>

    /// Creates a plan.
    public init(mode: DeliveryMode, activityUIDs: Set<String>) {
        self.mode = mode
        self.activityUIDs = activityUIDs
    }

    /// Live for everything.
    public static let live = DeliveryPlan(mode: .live, activityUIDs: [])

    /// How the socket reader treats a subscription's events.
    public func handling(for subscription: SubscriptionConfig) -> SubscriptionRoute.Handling {
        activityUIDs.contains(subscription.uid) ? .trigger : .emit
    }
}

/// Decides between activity and live delivery (docs/configuration.md, `delivery.mode`).
///
/// * `live`: live.
/// * `auto`: activity when the user can read every user's activity rows (`DirectusAPI.canReadAllActivity`), else
///   live with a warning and `directus_bridge_activity_fallbacks_total`.
/// * `activity`: the same check; without access the bridge stops with exit 77 and says which permission to grant.
///
/// In activity mode, collections whose activity tracking is off (`accountability: null`) never show up in the log:
/// their subscriptions run live, with a warning at start.
public enum DeliveryModeResolver {
    /// What to tell a person whose bridge user cannot read the activity log.
    public static let permissionAdvice =
        "grant the bridge user's role read access to directus_activity without a filter on \"user\" "
        + "(and read access to directus_revisions for deltas), or use an admin user"

    /// Resolves the mode, retrying while Directus is unreachable. nil when stopped first; `.failure` carries the
    /// outcome to exit with (explicit `activity` without access).
    public static func resolve(
        config: BridgeConfig,
        api: DirectusAPI,
        registry: MetricsRegistry,
        retryDelay: Duration,
        stop: ShutdownSignal,
        logger: Logger
    ) async -> Result<DeliveryPlan, RuntimeOutcome>? {
        let requested = config.delivery.mode
        if requested == .live {
            ActivityMetrics.publish(mode: .live, fallback: false, registry: registry)
            return .success(.live)
        }
        guard
            let readable = await retrying(
                stop: stop,
                delay: retryDelay,
                logger: logger,
                { () async throws(DirectusError) -> Bool in
                    do throws(DirectusError) {
                        return try await api.canReadAllActivity()
                    } catch  where !error.isRetriable && !error.isCredentialsRejected {
                        logger.warning(
                            "cannot tell whether the activity log is readable",
                            metadata: [LogKey.error: error.description]
                        )
                        return false
                    }
                }
            )
        else { return nil }
        if !readable {
            if requested == .activity {
                let message =
                    "delivery.mode is activity, but the bridge's user cannot read every row of directus_activity: "
                    + permissionAdvice
                logger.error(message)
                return .failure(.credentialsRejected(message))
            }
            logger.warning(
                "directus_activity is not readable: delivering live socket events only (changes made while the "
                    + "bridge is disconnected are lost); to close that gap, " + permissionAdvice
            )
            ActivityMetrics.publish(mode: .live, fallback: true, registry: registry)
            return .success(.live)
        }

        var untracked: Set<String> = []
        for collection in Set(config.subscriptions.map(\.collection)).sorted() {
            guard
                let tracking = await retrying(
                    stop: stop,
                    delay: retryDelay,
                    logger: logger,
                    { () async throws(DirectusError) -> String? in
                        do throws(DirectusError) {
                            return try await api.accountability(of: collection)
                        } catch  where !error.isRetriable && !error.isCredentialsRejected {
                            // Collection settings unreadable: assume Directus's default (tracked); an untracked
                            // collection then simply never shows up in the log.
                            logger.debug(
                                "cannot read the collection's settings; assuming activity tracking is on",
                                metadata: [LogKey.collection: collection, LogKey.error: error.description]
                            )
                            return "all"
                        }
                    }
                )
            else { return nil }
            if tracking == nil {
                untracked.insert(collection)
                logger.warning(
                    "activity tracking is off for this collection (accountability null): its subscriptions run "
                        + "live, and changes made while the bridge is disconnected are lost; set the collection's "
                        + "Activity Tracking to \"all\" or \"activity\" in Directus to deliver them",
                    metadata: [LogKey.collection: collection]
                )
            }
        }
        let uids = Set(config.subscriptions.filter { !untracked.contains($0.collection) }.map(\.uid))
        let plan = uids.isEmpty ? DeliveryPlan.live : DeliveryPlan(mode: .activity, activityUIDs: uids)
        ActivityMetrics.publish(mode: plan.mode, fallback: false, registry: registry)
        return .success(plan)
    }

    /// Runs `body` until it succeeds; transport failures (and anything retriable) are retried with backoff from
    /// `delay` (`directus.reconnect.initial_delay`) up to 30 s.
    private static func retrying<T>(
        stop: ShutdownSignal,
        delay: Duration,
        logger: Logger,
        _ body: () async throws(DirectusError) -> T
    ) async -> T? {
        var backoff = Backoff(initialDelay: delay, maxDelay: max(delay, .seconds(30)))
        return await BridgeSystem.retrying(until: stop, backoff: &backoff) { () async throws -> T in
            try await body()
        } failed: { error, delay in
            logger.warning(
                "Directus unreachable while checking the activity log; retrying",
                metadata: [LogKey.error: "\(error)", LogKey.delay: delay]
            )
            return delay
        }
    }
}
