// A reduced SortWatcherLoop for ThreadSanitizer (docs/RELIABILITY.md "Sanitizers", the report on
// `SortWatcherLoop.ids`): state owned by one task on a `BlockingExecutor`, changed before and after
// `Wakeup.wait(timeout:until:)`, which another thread rings at random moments; each round's losing child (the
// `ShutdownSignal` sleep) is cancelled, so its continuation is resumed from a cancellation handler. It uses the
// bridge's own `Wakeup`, `ShutdownSignal`, `withTimeLimit` and `BlockingExecutor`, compiled with it:
//   swiftc -swift-version 6 -enable-upcoming-feature InternalImportsByDefault \
//     -enable-upcoming-feature MemberImportVisibility -sanitize=thread -Onone -parse-as-library \
//     -package-name bridge -module-name HopCheck -I Sources/CLinux Sources/BridgeSystem/*.swift \
//     Tests/sanitizers/tsan_wakeup_hop_check.swift -o tsan-wakeup-hop-check
//   LD_PRELOAD=.build-thread/libtsan_preload.so ./tsan-wakeup-hop-check 3000        no report expected
//   LD_PRELOAD=.build-thread/libtsan_preload.so ./tsan-wakeup-hop-check 300 race    the control: the ringing
//                                                                                   thread writes the state too,
//                                                                                   a race it must report (exit 66)
@preconcurrency import Glibc
import Synchronization

/// The loop's state (`SortWatcherLoop.ids`).
final class LoopState: @unchecked Sendable {
    // @unchecked: owned by the loop's task; only the control's ringing thread touches it besides (the race).
    var ids: [UInt64] = [0, 0, 0, 0]
}

/// Rings the wake-up every 0–300 µs until told to stop; in the control it writes the state as well.
final class Ringer: @unchecked Sendable {
    // @unchecked: `racing` is written without order on purpose (the control); the rest is Sendable.
    let wakeup: Wakeup
    let done = Atomic<Bool>(false)
    let racing: LoopState?

    init(wakeup: Wakeup, racing: LoopState?) {
        self.wakeup = wakeup
        self.racing = racing
    }

    func run() {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        while !done.load(ordering: .relaxed) {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            usleep(UInt32((seed >> 33) % 300))
            racing?.ids[0] &+= 1
            wakeup.ring()
        }
    }
}

/// The ringing thread's entry (at file scope: not isolated to the main actor).
func ringerEntry(_ raw: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    Unmanaged<Ringer>.fromOpaque(raw!).takeRetainedValue().run()
    return nil
}

@main struct HopCheck {
    static func main() async {
        let rounds = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 3000
        let executor = BlockingExecutor(name: "hop-check", idleTimeoutSeconds: 1)
        let wakeup = Wakeup()
        let stop = ShutdownSignal()
        let state = LoopState()
        let ringer = Ringer(wakeup: wakeup, racing: CommandLine.arguments.contains("race") ? state : nil)
        var thread = pthread_t()
        pthread_create(&thread, nil, ringerEntry, Unmanaged.passRetained(ringer).toOpaque())
        let task = Task(executorPreference: executor) {
            var threads = Set<UInt>()
            for round in 0..<rounds {
                state.ids[round & 3] &+= 1
                threads.insert(UInt(pthread_self()))
                await wakeup.wait(timeout: .seconds(3600), until: stop)
                state.ids[(round + 1) & 3] &+= 1
                threads.insert(UInt(pthread_self()))
            }
            return threads.count
        }
        let threads = await task.value
        ringer.done.store(true, ordering: .relaxed)
        pthread_join(thread, nil)
        print("rounds \(rounds), threads the task ran on \(threads)")
    }
}
