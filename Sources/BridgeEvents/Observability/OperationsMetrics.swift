internal import BridgeSystem

/// What was built: the package version and the git commit (from the build-tool plugin in the app layer).
public struct BuildInfo: Sendable, Equatable {
    /// The package version (`0.1.0`).
    public var version: String
    /// The git commit, `-dirty` when the tree had changes, `unknown` outside a checkout.
    public var commit: String

    /// Creates build information.
    public init(version: String, commit: String) {
        self.version = version
        self.commit = commit
    }
}

/// The process-level metrics: build info, start time, and the connection and readiness state from `HealthState`,
/// read at scrape time so they can never disagree with `/readyz`.
package enum OperationsMetrics {
    /// Registers the process-level metrics of `build` and `health` in `registry`.
    package static func register(in registry: MetricsRegistry, health: HealthState, build: BuildInfo) {
        registry.gauge(
            "directus_bridge_build_info",
            help: "Always 1; the labels say which build is running.",
            labels: [("version", build.version), ("commit", build.commit)]
        ).set(1)
        // The kernel's start time when /proc tells it, else now (the registry is made at start-up).
        registry.gauge("process_start_time_seconds", help: "Start time of the process since unix epoch in seconds.")
            .set(ProcessStatistics.startTimeSeconds() ?? Double(Timestamp.now().microsecondsSinceEpoch) / 1e6)
        registry.gaugeFunction(
            "directus_bridge_connected",
            help: "1 while the realtime socket to Directus is open and authenticated, else 0."
        ) { [health] in health.snapshot.connected ? 1 : 0 }
        registry.gaugeFunction(
            "directus_bridge_authenticated",
            help: "1 while Directus accepts the bridge's credentials, else 0."
        ) { [health] in health.snapshot.authenticated ? 1 : 0 }
        registry.gaugeFunction(
            "directus_bridge_subscriptions_live",
            help: "Subscriptions that Directus confirmed (init) on this connection."
        ) { [health] in Double(health.snapshot.liveSubscriptions.count) }
        registry.gaugeFunction("directus_bridge_subscriptions_configured", help: "Subscriptions in the configuration.")
        {
            [health] in Double(health.snapshot.expectedSubscriptions.count)
        }
        registry.gaugeFunction(
            "directus_bridge_ready",
            help: "1 when /readyz answers 200 (connected, authenticated, subscribed, no sink stuck)."
        ) { [health] in health.snapshot.isReady ? 1 : 0 }
        // The names every Prometheus client library uses, so stock dashboards and alerts work unchanged. NaN when
        // /proc cannot be read.
        registry.gaugeFunction("process_resident_memory_bytes", help: "Resident memory size in bytes.") {
            ProcessStatistics.residentMemoryBytes() ?? .nan
        }
        registry.counterFunction("process_cpu_seconds_total", help: "Total user and system CPU time in seconds.") {
            ProcessStatistics.cpuSeconds() ?? .nan
        }
        registry.gaugeFunction("process_open_fds", help: "Number of open file descriptors.") {
            ProcessStatistics.openFileDescriptors() ?? .nan
        }
        registry.gaugeFunction("process_max_fds", help: "Maximum number of open file descriptors.") {
            ProcessStatistics.maxFileDescriptors() ?? .nan
        }
        registry.counterFunction(
            "directus_bridge_thread_start_failures_total",
            help: "Threads the system refused to start since the process began (thread limit reached)."
        ) { Double(DetachedThread.startFailures) }
    }
}
