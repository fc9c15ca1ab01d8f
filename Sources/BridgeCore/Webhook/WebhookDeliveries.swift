public import BridgeConfig
package import BridgeHTTP
import BridgeJSON
public import BridgeSystem
import BridgeTLS
import Synchronization

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The webhook side of `run`: builds each `type: webhook` sink with its delivery service and HTTP engine over the
/// shared outbox (`<state_dir>/webhooks.db`, opened with the first webhook sink), and runs the services until
/// shutdown.
public final class WebhookDeliveries: Sendable {
    private struct Delivery: Sendable {
        let service: WebhookDeliveryService
        let engine: HTTPDeliveryEngine
    }

    private let stateDir: String
    private let userAgent: String
    private let caFile: String?
    private let registry: MetricsRegistry
    private let stats: StatsReporter?
    private let logger: Logger
    private let store = Mutex<OutboxStore?>(nil)
    private let deliveries = Mutex<[Delivery]>([])

    /// Prepares the webhook side; nothing is opened until the first `makeSink`. The outbox and dead-letter depths
    /// of every webhook sink, summed, go into `stats` lines. Receivers' certificates are verified against the
    /// system store plus `caFile` (`directus.tls.ca_file`: an in-house CA usually signs the receivers too).
    public init(
        stateDir: String, version: String, caFile: String?, registry: MetricsRegistry, stats: StatsReporter?,
        logger: Logger
    ) {
        self.stateDir = stateDir
        self.userAgent = "directus-bridge/\(version)"
        self.caFile = caFile
        self.registry = registry
        self.stats = stats
        self.logger = logger
    }

    /// Builds the sink for `config`, the entry at position `index` of `sinks`, and its delivery service.
    package func makeSink(_ config: WebhookSinkConfig, filter: EventFilter, index: Int) throws(RuntimeOutcome)
        -> any EventSink
    {
        let store = try openStore()
        let sinkID = WebhookSinkIdentity.id(index: index, url: config.url)
        let signer: WebhookSigner
        do {
            signer = try WebhookSigner(secrets: config.signingSecrets)
        } catch {
            throw .configurationProblem("sinks[\(index)]: \(error)")
        }
        let engine: HTTPDeliveryEngine
        do {
            engine = try HTTPDeliveryEngine(
                options: Self.engineOptions(timeout: config.timeout, userAgent: userAgent, caFile: caFile),
                configuration: Self.engineConfiguration(maxInFlight: config.maxInFlight),
                logger: logger.child(label: "http")
            )
        } catch {
            throw .failure("cannot start the HTTP engine for sinks[\(index)]: \(error)")
        }
        let depths = WebhookDepths()
        let metrics = WebhookMetrics(registry: registry, sink: sinkID, depths: depths)
        let service = WebhookDeliveryService(
            sinkID: sinkID,
            store: store,
            transport: engine,
            builder: WebhookRequestBuilder(
                url: config.url.description,
                userAgent: userAgent,
                extraHeaders: config.headers.map { ($0.name, $0.value) },
                timeout: config.timeout,
                signer: signer
            ),
            policy: RetryPolicy(schedule: config.retrySchedule, maxAttempts: config.maxAttempts),
            settings: WebhookDeliveryService.Settings(maxInFlight: config.maxInFlight),
            metrics: metrics,
            depths: depths,
            logger: logger.child(label: "webhook", metadata: [LogKey.sink: sinkID])
        )
        let isFirst = deliveries.withLock { list in
            list.append(Delivery(service: service, engine: engine))
            return list.count == 1
        }
        if isFirst, let stats {
            stats.addGauge(StatsReporter.Key.outboxDepth) { [self] in
                Double(deliveries.withLock { $0.reduce(0) { $0 + $1.service.depths.outbox } })
            }
            stats.addGauge(StatsReporter.Key.deadLetterDepth) { [self] in
                Double(deliveries.withLock { $0.reduce(0) { $0 + $1.service.depths.deadLetters } })
            }
        }
        return WebhookSink(
            sinkID: sinkID,
            url: config.url.description,
            store: store,
            maxOutbox: config.maxOutbox,
            filter: filter,
            metrics: metrics,
            logger: logger.child(label: "webhook", metadata: [LogKey.sink: sinkID]),
            outboxChanged: { [service] in service.outboxChanged() }
        )
    }

    /// Runs every delivery service until `stop`, lets attempts in flight finish within most of
    /// `shutdownTimeout` (the rest is margin for saving state before the runtime's watchdog), then shuts the HTTP
    /// engines down. Returns at once without webhook sinks.
    public func run(stop: ShutdownSignal, shutdownTimeout: Duration) async {
        let drainTimeout = shutdownTimeout - min(.seconds(1), shutdownTimeout / 5)
        let all = deliveries.withLock { $0 }
        guard !all.isEmpty else { return }
        warnAboutUnconfiguredSinks(configured: Set(all.map(\.service.sinkID)))
        await withDiscardingTaskGroup { group in
            for delivery in all {
                group.addTask { await delivery.service.run(stop: stop, drainTimeout: drainTimeout) }
            }
        }
        for delivery in all { await delivery.engine.shutdown() }
    }

    /// The request options of a webhook sink's engine: the attempt `timeout` (connecting within at most 10 s of
    /// it), the first 16 KiB of an answer (a dead letter keeps 1 KiB), and of the answer's headers only
    /// `Retry-After`, the one the retry policy reads. Certificates are verified against the system store plus
    /// `caFile`, never skipped: `directus.tls.insecure_skip_verify` is for Directus only.
    package static func engineOptions(timeout: Duration, userAgent: String, caFile: String?) -> HTTPClientOptions {
        HTTPClientOptions(
            connectTimeout: min(timeout, .seconds(10)),
            requestTimeout: timeout,
            caFile: caFile,
            userAgent: userAgent,
            maxResponseBytes: 16 << 10,
            oversizedBody: .truncate,
            keptResponseHeaders: ["retry-after"]
        )
    }

    /// The HTTP engine of a webhook sink with `maxInFlight`: from 16 in flight on, two driver threads when there
    /// are two cores — curl's work per request is most of a delivery's CPU time, and one driver thread was the
    /// bottleneck of the whole path (BENCHMARKS.md, "Webhook delivery, full path").
    package static func engineConfiguration(maxInFlight: Int) -> HTTPDeliveryEngine.Configuration {
        let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        return HTTPDeliveryEngine.Configuration(maxInFlight: maxInFlight, drivers: maxInFlight >= 16 ? min(2, cores) : 1)
    }

    private func openStore() throws(RuntimeOutcome) -> OutboxStore {
        do {
            return try store.withLock { store in
                if let store { return store }
                let opened = try OutboxStore.open(stateDir: stateDir)
                store = opened
                return opened
            }
        } catch {
            throw .configurationProblem("cannot open the webhook outbox in \(stateDir): \(error)")
        }
    }

    /// Rows of a sink that is no longer in bridge.yaml (its URL or position changed) are kept, not delivered.
    private func warnAboutUnconfiguredSinks(configured: Set<String>) {
        guard let store = store.withLock({ $0 }), let counts = try? store.outboxCountsBySink() else { return }
        for (sink, count) in counts where !configured.contains(sink) && count > 0 {
            logger.warning(
                "the webhook outbox holds events of a sink that is no longer configured; they are kept, not sent",
                metadata: [LogKey.sink: sink, LogKey.count: "\(count)"]
            )
        }
    }
}

/// How a webhook sink is named in the outbox, the dead letters and metric labels.
package enum WebhookSinkIdentity {
    /// `<index>-<host:port>-<8 hex digits of a hash of the whole URL>`: stable while the sink keeps its position
    /// and URL, and free of the URL's path and query (which may carry a token).
    package static func id(index: Int, url: HTTPURL) -> String {
        let digest = HMACSHA256(key: Array("directus-bridge webhook sink".utf8))
            .authenticationCode(Array(url.description.utf8))
        let hex = digest.prefix(4).map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
        return "\(index)-\(url.host):\(url.effectivePort)-\(hex)"
    }
}
