// Tells ThreadSanitizer what Swift's Synchronization.Mutex already guarantees on Linux, for the
// `scripts/test.sh --sanitize=thread` runs only (loaded with LD_PRELOAD; docs/RELIABILITY.md "Sanitizers").
//
// Mutex locks and unlocks with an atomic compare-and-swap on its futex word, inlined into our code: ThreadSanitizer
// instruments those and sees the ordering. When the lock is contended, the work moves into
// `_MutexHandle._lockSlow`, `_tryLockSlow` and `_unlockSlow` in libswiftSynchronization.so, which is not
// instrumented: a spin with its own compare-and-swap, then FUTEX_LOCK_PI/FUTEX_UNLOCK_PI, where the kernel hands the
// lock over. ThreadSanitizer sees none of it, so two critical sections of one Mutex that met under contention look
// unordered and it reports a race that cannot happen. These wrappers call the originals and add the edge the
// futex word carries: a release on the word before a slow unlock, an acquire on it after a slow lock (the same
// address the inlined fast paths use). Nothing is suppressed: an access outside the lock is still reported.
//
// The functions are Swift methods of `_MutexHandle` (a borrowing `self` in the swiftself register, the Swift calling
// convention), interposed by their mangled names. __tsan_acquire/__tsan_release are weak: processes without
// ThreadSanitizer (the Python peers) load this library too and must not fail to.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SWIFTCALL __attribute__((swiftcall))
#define SWIFT_SELF __attribute__((swift_context)) // clang lowers it to LLVM's swiftself (r13)

extern void __tsan_acquire(void *address) __attribute__((weak));
extern void __tsan_release(void *address) __attribute__((weak));

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define TRY_LOCK_SLOW "$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

typedef SWIFTCALL void (*LockSlow)(uint32_t self_id, SWIFT_SELF void *word);
typedef SWIFTCALL bool (*TryLockSlow)(SWIFT_SELF void *word);
typedef SWIFTCALL void (*UnlockSlow)(SWIFT_SELF void *word);

// The next definition of `name` (libswiftSynchronization.so's); its absence means the mangled names changed with the
// toolchain, and every later report would be suspect, so the process stops.
static void *original(const char *name) {
    void *function = dlsym(RTLD_NEXT, name);
    if (function == NULL) {
        fprintf(stderr, "tsan_mutex: %s not found (toolchain changed?)\n", name);
        abort();
    }
    return function;
}

SWIFTCALL void lock_slow(uint32_t self_id, SWIFT_SELF void *word) __asm__(LOCK_SLOW);
SWIFTCALL void lock_slow(uint32_t self_id, SWIFT_SELF void *word) {
    static LockSlow next;
    if (next == NULL) next = (LockSlow)original(LOCK_SLOW);
    next(self_id, word);
    if (__tsan_acquire) __tsan_acquire(word);
}

SWIFTCALL bool try_lock_slow(SWIFT_SELF void *word) __asm__(TRY_LOCK_SLOW);
SWIFTCALL bool try_lock_slow(SWIFT_SELF void *word) {
    static TryLockSlow next;
    if (next == NULL) next = (TryLockSlow)original(TRY_LOCK_SLOW);
    bool locked = next(word);
    if (locked && __tsan_acquire) __tsan_acquire(word);
    return locked;
}

SWIFTCALL void unlock_slow(SWIFT_SELF void *word) __asm__(UNLOCK_SLOW);
SWIFTCALL void unlock_slow(SWIFT_SELF void *word) {
    static UnlockSlow next;
    if (next == NULL) next = (UnlockSlow)original(UNLOCK_SLOW);
    if (__tsan_release) __tsan_release(word);
    next(word);
}
