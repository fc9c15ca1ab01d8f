/// A long-lived part of the process (a reader, a sink, a metrics reporter), run by a `ServiceGroup`.
///
/// `run` returns when `shutdown` triggers and the service has finished what it holds (the graceful phase), or as
/// soon as possible once its task is cancelled (the forced phase). Returning or throwing before `shutdown`
/// triggered ends the whole group: a service that stops on its own is a failure, as in swift-service-lifecycle.
public protocol Service: Sendable {
    /// A name for logs.
    var name: String { get }
    /// Runs until `shutdown` triggers (then drains and returns) or the task is cancelled (then returns at once).
    func run(until shutdown: ShutdownSignal) async throws
}

/// Runs services side by side and shuts them down in two phases.
///
/// * **Graceful.** When the group's trigger fires (SIGTERM) or a service ends on its own, the services are asked to
///   stop one at a time in reverse order of the list, each after the one behind it has returned: list producers
///   after consumers (`[sinks, pipeline, intake]`) and the intake stops first, then the pipeline drains into the
///   sinks, then the sinks finish their deliveries.
/// * **Forced.** Once `gracefulTimeout` has passed since shutdown began, every service still running is asked to
///   stop and its task is cancelled; the group waits for them to return (services answer cancellation promptly).
///
/// `run` returns the failures: services that threw (but not `CancellationError` in the forced phase), or returned
/// before they were asked to stop.
public struct ServiceGroup: Sendable {
    /// A service that ended the group, and why.
    public struct Failure: Sendable, CustomStringConvertible {
        /// The service's name.
        public var service: String
        /// What it threw, or that it returned on its own.
        public var reason: String
        public var description: String { "\(service): \(reason)" }
    }

    private let services: [any Service]
    private let gracefulTimeout: Duration
    private let logger: Logger

    /// Creates a group; `services` are started together and stopped in reverse order.
    public init(services: [any Service], gracefulTimeout: Duration, logger: Logger) {
        self.services = services
        self.gracefulTimeout = gracefulTimeout
        self.logger = logger
    }

    /// What a service that ended with `CancellationError` is reported with (not a failure in the forced phase).
    private static let cancelled = "cancelled"

    private enum Event: Sendable {
        case ended(index: Int, error: String?)
        case triggered
        case deadline
    }

    /// Runs every service until `trigger` fires or one ends, then shuts the group down; returns the failures.
    public func run(trigger: ShutdownSignal) async -> [Failure] {
        let signals = services.map { _ in ShutdownSignal() }
        return await withTaskGroup(of: Event.self) { group in
            for (index, service) in services.enumerated() {
                let signal = signals[index]
                group.addTask {
                    do {
                        try await service.run(until: signal)
                        return .ended(index: index, error: nil)
                    } catch is CancellationError {
                        return .ended(index: index, error: Self.cancelled)
                    } catch {
                        return .ended(index: index, error: "\(error)")
                    }
                }
            }
            group.addTask {
                await trigger.wait()
                return .triggered
            }
            var running = Set(services.indices)
            var failures: [Failure] = []
            var shuttingDown = false
            var forced = false
            /// The service asked to stop last: the next one is asked once it returned.
            var stopping: Int?
            while !running.isEmpty, let event = await group.next() {
                switch event {
                case .ended(let index, let error):
                    running.remove(index)
                    if let error, !(forced && error == Self.cancelled) {
                        failures.append(Failure(service: services[index].name, reason: error))
                    } else if !signals[index].isTriggered {
                        failures.append(Failure(service: services[index].name, reason: "stopped on its own"))
                    }
                case .triggered:
                    break
                case .deadline:
                    guard !running.isEmpty else { break }
                    forced = true
                    logger.warning(
                        "graceful shutdown took too long; stopping the rest now",
                        metadata: ["services": running.sorted().map { services[$0].name }.joined(separator: ",")]
                    )
                    for index in running { signals[index].trigger() }
                    group.cancelAll()
                }
                if !shuttingDown && (trigger.isTriggered || running.count < services.count) {
                    shuttingDown = true
                    let timeout = gracefulTimeout
                    group.addTask {
                        try? await Task.sleep(for: timeout)  // the graceful phase's limit: a real timer
                        return .deadline
                    }
                }
                guard shuttingDown, !forced else { continue }
                if let current = stopping, running.contains(current) { continue }
                // The next one still running, from the end of the list.
                if let next = running.max() {
                    stopping = next
                    signals[next].trigger()
                }
            }
            group.cancelAll()  // the trigger watcher and the deadline timer
            return failures
        }
    }
}
