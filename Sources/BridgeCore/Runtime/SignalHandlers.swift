package import BridgeSystem
package import Dispatch
package import Synchronization
package import BridgeEvents
package import BridgeDirectus
package import BridgeActivity
package import BridgeSinks

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// SIGINT/SIGTERM start a graceful shutdown; a second one exits at once (the outbox and the cursor are committed
/// transactionally, so state stays consistent); SIGHUP reopens NDJSON files.
package final class SignalHandlers: @unchecked Sendable {
    // @unchecked: `sources` is written once in init; dispatch sources are thread-safe to cancel.
    private let sources: [any DispatchSourceSignal]
    private let count = SignalCount()

    package init(stop: ShutdownSignal, reopen: @escaping @Sendable () -> Void, logger: Logger) {
        let queue = DispatchQueue(label: "directus-bridge.signals")
        var made: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            made.append(source)
        }
        sources = made
        for source in sources {
            let number = Int32(source.handle)
            source.setEventHandler { [count] in
                if number == SIGHUP {
                    reopen()
                    return
                }
                let now = ContinuousClock.now
                if count.value.add(1, ordering: .relaxed).newValue == 1 {
                    count.first.withLock { $0 = now }
                    logger.info("shutting down", metadata: ["signal": number == SIGINT ? "SIGINT" : "SIGTERM"])
                    stop.trigger()
                } else if let first = count.first.withLock({ $0 }), now - first < .seconds(1) {
                    // Supervisors like timeout(1) signal the child and then its process group: one request.
                    return
                } else {
                    logger.warning("second signal: exiting now")
                    exit(1)
                }
            }
            source.resume()
        }
    }

    package func cancel() {
        for source in sources { source.cancel() }
    }
}

/// How many stop signals arrived (a class so the dispatch handlers can share it).
private final class SignalCount: Sendable {
    package let value = Atomic<Int>(0)
    package let first = Mutex<ContinuousClock.Instant?>(nil)
}
