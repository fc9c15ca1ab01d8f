package import BridgeConfig
package import BridgeHTTP
package import BridgeSystem

#if canImport(Glibc)
    @preconcurrency import Glibc
    package import BridgeEvents
#endif

/// `type: webhook`: one signed POST per change, from a durable outbox shared by every webhook sink
/// (`<state_dir>/webhooks.db`), each sink with its delivery service and HTTP engine.
package enum WebhookSinkType: SinkType {
    package static var configType: SinkConfigType { WebhookSinkConfig.configType }
    /// The outbox and dead letters live in `<state_dir>/webhooks.db`.
    package static var keepsLocalState: Bool { true }

    /// `<index>-<host:port>-<8 hex digits of a hash of the whole URL>`: the outbox rows, dead letters and metric
    /// labels of a sink carry it, so it never changes while the sink keeps its position and URL (and never holds
    /// the URL's path or query, which may carry a token).
    package static func identity(of settings: WebhookSinkConfig, index: Int) -> String {
        "\(index)-\(settings.url.host):\(settings.url.effectivePort)-\(SinkIdentity.hash(settings.url.description))"
    }

    package static func makeConnector(_ settings: WebhookSinkConfig, context: SinkContext) throws(RuntimeOutcome)
        -> any SinkConnector
    {
        let outbox = try context.outbox(purpose: "webhook outbox")
        let signer: WebhookSigner
        do {
            signer = try WebhookSigner(secrets: settings.signingSecrets)
        } catch {
            throw .configurationProblem("sinks[\(context.index)]: \(error)")
        }
        let engine: HTTPDeliveryEngine
        do {
            engine = try HTTPDeliveryEngine(
                options: engineOptions(
                    timeout: settings.timeout,
                    userAgent: context.userAgent,
                    caFile: settings.caFile,
                    proxy: settings.proxy
                ),
                configuration: engineConfiguration(maxInFlight: settings.maxInFlight),
                logger: context.logger.child(label: "http")
            )
        } catch {
            throw .failure("cannot start the HTTP engine for sinks[\(context.index)]: \(error)")
        }
        let depths = WebhookDepths()
        let metrics = WebhookMetrics(registry: context.registry, sink: context.sinkID, depths: depths)
        context.stats?.addGauge(StatsReporter.Key.outboxDepth) { Double(depths.outbox) }
        context.stats?.addGauge(StatsReporter.Key.deadLetterDepth) { Double(depths.deadLetters) }
        let service = WebhookDeliveryService(
            sinkID: context.sinkID,
            store: outbox.store,
            engine: engine,
            builder: WebhookRequestBuilder(
                url: settings.url.description,
                userAgent: context.userAgent,
                contentType: context.encoder.contentType,
                extraHeaders: settings.headers.map { ($0.name, $0.value) },
                timeout: settings.timeout,
                signer: signer
            ),
            policy: RetryPolicy(schedule: settings.retrySchedule, maxAttempts: settings.maxAttempts),
            settings: WebhookDeliveryService.Settings(maxInFlight: settings.maxInFlight),
            metrics: metrics,
            depths: depths,
            deadLetters: context.state.webhookDeadLetters(
                sink: context.sinkID,
                logger: context.logger.child(label: "webhook", metadata: [LogKey.sink: context.sinkID])
            ),
            logger: context.logger.child(label: "webhook", metadata: [LogKey.sink: context.sinkID])
        )
        // Attempts in flight may finish within most of shutdown_timeout; the rest is margin for saving state.
        let drainTimeout = context.shutdownTimeout - min(.seconds(1), context.shutdownTimeout / 5)
        return WebhookSink(
            sinkID: context.sinkID,
            name: settings.summary,
            store: outbox.store,
            maxOutbox: settings.maxOutbox,
            metrics: metrics,
            logger: context.logger.child(label: "webhook", metadata: [LogKey.sink: context.sinkID]),
            clock: service.clock,
            committed: { [service] in service.accepted($0) },
            progressAfterDelivery: context.state.progressWaitsForDelivery,
            outboxEmptied: depths.outboxEmptied,
            background: { [service] stop in
                outbox.warnAboutLeftovers()
                await service.run(stop: stop, drainTimeout: drainTimeout)
                await engine.shutdown()
            }
        )
    }

    /// The request options of a webhook sink's engine: the attempt `timeout` (connecting within at most 10 s of
    /// it), the first 16 KiB of an answer (a dead letter keeps 1 KiB), and of the answer's headers only
    /// `Retry-After`, the one the retry policy reads. Certificates are verified against the system store plus
    /// `caFile` (`WebhookSinkConfig.caFile`), never skipped: `directus.tls.insecure_skip_verify` is for Directus only.
    /// With `proxy`, every request tunnels through it.
    package static func engineOptions(
        timeout: Duration,
        userAgent: String,
        caFile: String?,
        proxy: HTTPProxy? = nil
    ) -> HTTPClientOptions {
        HTTPClientOptions(
            connectTimeout: min(timeout, .seconds(10)),
            requestTimeout: timeout,
            caFile: caFile,
            userAgent: userAgent,
            maxResponseBytes: 16 << 10,
            oversizedBody: .truncate,
            keptResponseHeaders: ["retry-after"],
            proxy: proxy
        )
    }

    /// The HTTP engine of a webhook sink with `maxInFlight`: from 16 in flight on, two driver threads when there
    /// are two cores — curl's work per request is most of a delivery's CPU time, and one driver thread was the
    /// bottleneck of the whole path (BENCHMARKS.md, "Webhook delivery, full path").
    package static func engineConfiguration(maxInFlight: Int) -> HTTPDeliveryEngine.Configuration {
        let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        return HTTPDeliveryEngine.Configuration(
            maxInFlight: maxInFlight,
            drivers: maxInFlight >= 16 ? min(2, cores) : 1
        )
    }
}
