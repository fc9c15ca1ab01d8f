import Testing

@testable import BridgeActivity

/// The lease, step by step on a made-up monotonic clock: a standby waits a whole lease on an unchanged revision, the
/// active bridge renews every third and stops delivering at two thirds after its last successful renewal.
@Suite struct LeaseStateMachineTests {
    let start = ContinuousClock.now

    @Test func aFreeKeyIsTakenAtOnceAndRenewedEveryThird() {
        var machine = LeaseStateMachine(lease: .seconds(9))
        #expect(machine.nextAction(now: start) == (.read, nil))
        machine.receivedLease(revision: nil, free: true, now: start)
        #expect(machine.nextAction(now: start) == (.acquire(expecting: 0), nil))
        #expect(machine.receivedAcquired(revision: 5, sentAt: start) == .becameActive)
        #expect(machine.mayDeliver(now: start + .seconds(5)))
        #expect(machine.nextAction(now: start + .seconds(1)) == (.wait(until: start + .seconds(3)), nil))
        #expect(
            machine.nextAction(now: start + .seconds(3)) == (.renew(expecting: 5, deadline: start + .seconds(6)), nil))
        machine.receivedRenewed(revision: 9, sentAt: start + .seconds(3))
        #expect(machine.mayDeliver(now: start + .milliseconds(8900)))
        #expect(!machine.mayDeliver(now: start + .seconds(9)), "two thirds of the lease after the last renewal")
    }

    @Test func deliveryEndsTwoThirdsOfTheLeaseAfterTheLastRenewal() {
        var machine = LeaseStateMachine(lease: .seconds(9))
        #expect(machine.deliverableUntil == nil, "a standby may not deliver at all")
        machine.receivedLease(revision: nil, free: true, now: start)
        _ = machine.receivedAcquired(revision: 1, sentAt: start)
        #expect(machine.deliverableUntil == start + .seconds(6))
        machine.receivedRenewed(revision: 2, sentAt: start + .seconds(3))
        #expect(machine.deliverableUntil == start + .seconds(9))
        _ = machine.receivedLost(reason: "test")
        #expect(machine.deliverableUntil == nil)
    }

    @Test func aStandbyTakesOverOnlyAfterAWholeLeaseOnTheSameRevision() {
        var machine = LeaseStateMachine(lease: .seconds(6))
        machine.receivedLease(revision: 7, free: false, now: start)
        #expect(machine.nextAction(now: start + .seconds(1)) == (.wait(until: start + .milliseconds(1600)), nil))
        // The holder renewed: the count starts again from when the new revision was seen.
        machine.receivedLease(revision: 8, free: false, now: start + .seconds(2))
        machine.receivedLease(revision: 8, free: false, now: start + .seconds(5))
        guard case .wait = machine.nextAction(now: start + .milliseconds(7999)).0 else {
            Issue.record("took over early")
            return
        }
        #expect(machine.nextAction(now: start + .seconds(8)) == (.acquire(expecting: 8), nil))
        #expect(!machine.mayDeliver(now: start + .seconds(8)))
        // Another standby won: back to reading.
        #expect(machine.receivedLost(reason: "lost") == nil)
        #expect(machine.nextAction(now: start + .seconds(8)) == (.read, nil))
    }

    @Test func failedRenewalsStepDownBeforeTheLeaseCanLapse() {
        var machine = LeaseStateMachine(lease: .seconds(3))
        machine.receivedLease(revision: nil, free: true, now: start)
        _ = machine.receivedAcquired(revision: 1, sentAt: start)
        #expect(machine.nextAction(now: start + .seconds(1)) == (.renew(expecting: 1, deadline: start + .seconds(2)), nil))
        machine.receivedFailure(now: start + .seconds(1))
        #expect(machine.nextAction(now: start + .milliseconds(1100)) == (.wait(until: start + .milliseconds(1250)), nil))
        #expect(machine.mayDeliver(now: start + .milliseconds(1999)))
        let (action, transition) = machine.nextAction(now: start + .seconds(2))
        #expect(action == .read)
        #expect(transition == .becameStandby(reason: "the lease could not be renewed in time"))
        #expect(!machine.mayDeliver(now: start + .seconds(2)))
        // A renewal answered after stepping down changes nothing.
        machine.receivedRenewed(revision: 2, sentAt: start + .seconds(1))
        #expect(!machine.mayDeliver(now: start + .seconds(2)))
    }

    @Test func aLostCompareAndSetOrAFencedCursorStepsDownAtOnce() {
        var machine = LeaseStateMachine(lease: .seconds(10))
        machine.receivedLease(revision: 3, free: true, now: start)
        _ = machine.receivedAcquired(revision: 4, sentAt: start)
        #expect(machine.receivedLost(reason: "fenced") == .becameStandby(reason: "fenced"))
        #expect(!machine.mayDeliver(now: start))
        #expect(machine.stopping() == nil)
        _ = machine.nextAction(now: start)
        machine.receivedLease(revision: 6, free: true, now: start)
        _ = machine.receivedAcquired(revision: 7, sentAt: start)
        #expect(machine.stopping() == 7, "a stopping bridge releases what it holds")
    }
}
