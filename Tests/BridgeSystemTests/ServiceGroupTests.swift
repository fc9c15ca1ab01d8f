import BridgeSystem
import BridgeTestSupport
import Synchronization
import Testing

/// Records what the services of a test did, in order.
private final class Journal: Sendable {
    private let entries = Mutex<[String]>([])
    func add(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}

/// A service that waits for its stop, then takes `drain` to finish (or ends/throws on its own when asked to).
private struct ScriptedService: Service {
    enum Ending: Sendable { case whenAsked, onItsOwn, throwing, ignoringStop, throwingWhenCancelled }
    let name: String
    let journal: Journal
    var drain: Duration = .zero
    var ending: Ending = .whenAsked

    struct Failed: Error, CustomStringConvertible { var description: String { "boom" } }

    func run(until shutdown: ShutdownSignal) async throws {
        journal.add("\(name) started")
        switch ending {
        case .onItsOwn:
            journal.add("\(name) ended")
            return
        case .throwing:
            throw Failed()
        case .whenAsked:
            await shutdown.wait()
            journal.add("\(name) asked")
            try? await Task.sleep(for: drain)
            journal.add("\(name) ended")
        case .ignoringStop:
            // Only cancellation ends it: the forced phase.
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
            journal.add("\(name) cancelled")
        case .throwingWhenCancelled:
            while true { try await Task.sleep(for: .milliseconds(5)) }
        }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct ServiceGroupTests {
    @Test func servicesStopInReverseOrderEachAfterTheOneBehindIt() async {
        let journal = Journal()
        let trigger = ShutdownSignal()
        let group = ServiceGroup(
            services: [
                ScriptedService(name: "sinks", journal: journal),
                ScriptedService(name: "pipeline", journal: journal, drain: .milliseconds(50)),
                ScriptedService(name: "intake", journal: journal, drain: .milliseconds(50)),
            ],
            gracefulTimeout: .seconds(30),
            logger: .silent
        )
        async let failures = group.run(trigger: trigger)
        while journal.all.filter({ $0.hasSuffix("started") }).count < 3 { try? await Task.sleep(for: .milliseconds(5)) }
        trigger.trigger()
        #expect(await failures.isEmpty)
        let stops = journal.all.filter { !$0.hasSuffix("started") }
        #expect(
            stops == [
                "intake asked", "intake ended", "pipeline asked", "pipeline ended", "sinks asked", "sinks ended",
            ]
        )
    }

    @Test func aServiceThatEndsOnItsOwnShutsTheGroupDownAndIsReported() async {
        let journal = Journal()
        let group = ServiceGroup(
            services: [
                ScriptedService(name: "sinks", journal: journal),
                ScriptedService(name: "pipeline", journal: journal, ending: .onItsOwn),
                ScriptedService(name: "intake", journal: journal),
            ],
            gracefulTimeout: .seconds(30),
            logger: .silent
        )
        let failures = await group.run(trigger: ShutdownSignal())
        #expect(failures.map(\.service) == ["pipeline"])
        #expect(failures.first?.reason == "stopped on its own")
        #expect(journal.all.contains("intake ended") && journal.all.contains("sinks ended"))
    }

    @Test func aThrowingServiceIsReportedWithItsError() async {
        let journal = Journal()
        let group = ServiceGroup(
            services: [
                ScriptedService(name: "a", journal: journal),
                ScriptedService(name: "b", journal: journal, ending: .throwing),
            ],
            gracefulTimeout: .seconds(30),
            logger: .silent
        )
        let failures = await group.run(trigger: ShutdownSignal())
        #expect(failures.map(\.description) == ["b: boom"])
    }

    @Test func pastTheGracefulTimeoutTheRestIsCancelled() async {
        let journal = Journal()
        let trigger = ShutdownSignal()
        let group = ServiceGroup(
            services: [
                ScriptedService(name: "sinks", journal: journal),
                ScriptedService(name: "stuck", journal: journal, ending: .ignoringStop),
            ],
            gracefulTimeout: .milliseconds(200),
            logger: .silent
        )
        trigger.trigger()
        let started = ContinuousClock.now
        let failures = await group.run(trigger: trigger)
        #expect(failures.isEmpty)  // both were asked to stop; the stuck one ended when cancelled
        #expect(journal.all.contains("stuck cancelled"))
        #expect(journal.all.contains("sinks ended"))
        #expect(ContinuousClock.now - started >= .milliseconds(200))
    }

    @Test func cancellationInTheForcedPhaseIsNoFailureButOnItsOwnItIs() async {
        let trigger = ShutdownSignal()
        trigger.trigger()
        let forced = await ServiceGroup(
            services: [ScriptedService(name: "stuck", journal: Journal(), ending: .throwingWhenCancelled)],
            gracefulTimeout: .milliseconds(50),
            logger: .silent
        ).run(trigger: trigger)
        #expect(forced.isEmpty)
        struct CancelsItself: Service {
            let name = "self-cancelling"
            func run(until shutdown: ShutdownSignal) async throws { throw CancellationError() }
        }
        let early = await ServiceGroup(services: [CancelsItself()], gracefulTimeout: .seconds(1), logger: .silent)
            .run(trigger: ShutdownSignal())
        #expect(early.map(\.service) == ["self-cancelling"])
    }

    @Test func anEmptyGroupReturnsAtOnce() async {
        let failures = await ServiceGroup(services: [], gracefulTimeout: .seconds(1), logger: .silent)
            .run(trigger: ShutdownSignal())
        #expect(failures.isEmpty)
    }
}

@Suite struct RetryingTests {
    struct Refused: Error {}

    @Test func retriesWithTheBackoffUntilItWorksThenResetsIt() async {
        var backoff = Backoff(initialDelay: .milliseconds(1), maxDelay: .milliseconds(4))
        var calls = 0
        var delays: [Duration] = []
        let value = await retrying(until: ShutdownSignal(), backoff: &backoff) {
            calls += 1
            if calls < 4 { throw Refused() }
            return calls
        } failed: { _, delay in
            delays.append(delay)
            return delay
        }
        #expect(value == 4)
        #expect(delays.count == 3 && delays.allSatisfy { $0 >= .milliseconds(1) && $0 <= .milliseconds(4) })
        #expect(backoff.attempt == 0)
    }

    @Test func aFailureHandlerCanGiveUp() async {
        var backoff = Backoff(initialDelay: .milliseconds(1), maxDelay: .milliseconds(1))
        let value: Int? = await retrying(until: ShutdownSignal(), backoff: &backoff) {
            throw Refused()
        } failed: { _, _ in nil }
        #expect(value == nil)
    }

    @Test func aStopEndsTheWaitAtOnce() async {
        let stop = ShutdownSignal()
        var backoff = Backoff(initialDelay: .seconds(60), maxDelay: .seconds(60))
        let started = ContinuousClock.now
        let value: Int? = await retrying(until: stop, backoff: &backoff) {
            throw Refused()
        } failed: { _, delay in
            stop.trigger()
            return delay
        }
        #expect(value == nil)
        // Below the 60 s backoff it must not wait out, however patient.
        #expect(ContinuousClock.now - started < .seconds(min(TestEnvironment.patient(10), 50)))
    }
}

@Suite struct DurationUnitsTests {
    @Test func conversionsRoundAsDocumentedAndSaturate() {
        #expect(Duration.milliseconds(1500).inSeconds == 1.5)
        #expect(Duration.microseconds(1999).wholeMilliseconds == 1)
        #expect(Duration.microseconds(1001).roundedUpMilliseconds == 2)
        #expect(Duration.milliseconds(2).roundedUpMilliseconds == 2)
        #expect(Duration.seconds(-5).wholeMilliseconds == 0)
        #expect(Duration.milliseconds(-1).roundedUpMilliseconds == 0)
        #expect(Duration.seconds(Int64.max).wholeMilliseconds == .max)
        #expect(Duration.seconds(Int64.max / 1000 + 1).wholeNanoseconds == .max)
        #expect(Duration.seconds(3).wholeMicroseconds == 3_000_000)
    }

    @Test func logTextIsShort() {
        #expect(Duration.milliseconds(250).logText == "250ms")
        #expect(Duration.milliseconds(1500).logText == "1.5s")
        #expect(Duration.seconds(30).logText == "30s")
        #expect(Duration.milliseconds(1234).logText == "1.234s")
    }
}
