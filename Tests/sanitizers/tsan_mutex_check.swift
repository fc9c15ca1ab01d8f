// The check scripts/test.sh --sanitize=thread runs before the suites (docs/RELIABILITY.md "Sanitizers"): two threads
// add to a counter that lives outside a Mutex, holding the lock long enough for the other to wait in the kernel.
//   tsan-mutex-check locked     every access holds the lock: no race, and ThreadSanitizer must report none
//   tsan-mutex-check unlocked   the second thread skips the lock: a race, and ThreadSanitizer must report it
// With tsan_swift_mutex.c preloaded the first is clean and the second is reported; without it the first is reported
// too (the futex hand-over is invisible), which is why the library exists.
import Glibc
import Synchronization

/// The lock and the counter it guards, shared by both threads.
final class Shared: @unchecked Sendable {
    let lock = Mutex<Void>(())
    var counter = 0
}

/// What one thread runs.
final class Worker: @unchecked Sendable {
    let shared: Shared
    let locked: Bool

    init(shared: Shared, locked: Bool) {
        self.shared = shared
        self.locked = locked
    }

    func run() {
        for _ in 0..<20_000 {
            if locked {
                shared.lock.withLock { _ in
                    shared.counter += 1
                    for _ in 0..<50 { _ = getpid() }
                }
            } else {
                shared.counter += 1
            }
        }
    }
}

let mode = CommandLine.arguments.dropFirst().first ?? ""
guard mode == "locked" || mode == "unlocked" else {
    fputs("usage: tsan-mutex-check locked|unlocked\n", stderr)
    exit(2)
}
let shared = Shared()
var threads: [pthread_t] = []
for index in 0..<2 {
    let worker = Worker(shared: shared, locked: mode == "locked" || index == 0)
    var thread = pthread_t()
    let created = pthread_create(&thread, nil, { raw in
        Unmanaged<Worker>.fromOpaque(raw!).takeRetainedValue().run()
        return nil
    }, Unmanaged.passRetained(worker).toOpaque())
    guard created == 0 else { fatalError("pthread_create: \(created)") }
    threads.append(thread)
}
for thread in threads { pthread_join(thread, nil) }
print(mode, shared.counter)
