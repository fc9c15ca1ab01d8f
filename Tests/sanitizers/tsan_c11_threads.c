// C11 threads as ThreadSanitizer can see them, for the `scripts/test.sh --sanitize=thread` runs only (loaded with
// LD_PRELOAD next to tsan_swift_mutex.c; docs/RELIABILITY.md "Sanitizers").
//
// librdkafka creates its threads with thrd_create and locks with mtx_lock/cnd_wait. glibc implements those as thin
// wrappers that call its internal pthread functions directly, past the pthread_* symbols ThreadSanitizer intercepts,
// and the runtime shipped with the Swift toolchain has no C11 interceptors: a librdkafka thread then runs without
// ThreadSanitizer's per-thread state and the process dies with a SEGV in the sanitizer's allocator at the thread's
// first malloc (the crash of the earlier runs), and its locks would be invisible. These definitions do what glibc's
// do (nptl's thrd_*.c, mtx_*.c, cnd_*.c: the same pthread call, the same error mapping) through the public pthread_*
// symbols, which ThreadSanitizer intercepts. They behave the same in a process without it.

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <threads.h>

/// glibc's thrd_err_map.
static int c11_result(int error) {
    switch (error) {
    case 0: return thrd_success;
    case ENOMEM: return thrd_nomem;
    case ETIMEDOUT: return thrd_timedout;
    case EBUSY: return thrd_busy;
    default: return thrd_error;
    }
}

/// A C11 thread's function and argument, handed to `c11_thread`.
struct c11_start {
    thrd_start_t function;
    void *argument;
};

/// Runs a C11 thread function as a pthread one; its int result travels as the thread's pointer result, as in glibc.
static void *c11_thread(void *raw) {
    struct c11_start start = *(struct c11_start *)raw;
    free(raw);
    return (void *)(intptr_t)start.function(start.argument);
}

int thrd_create(thrd_t *thread, thrd_start_t function, void *argument) {
    struct c11_start *start = malloc(sizeof *start);
    if (start == NULL) return thrd_nomem;
    start->function = function;
    start->argument = argument;
    int error = pthread_create((pthread_t *)thread, NULL, c11_thread, start);
    if (error != 0) free(start);
    return c11_result(error);
}

int thrd_join(thrd_t thread, int *result) {
    void *value;
    int error = pthread_join((pthread_t)thread, &value);
    if (error == 0 && result != NULL) *result = (int)(intptr_t)value;
    return c11_result(error);
}

int thrd_detach(thrd_t thread) { return c11_result(pthread_detach((pthread_t)thread)); }

int mtx_init(mtx_t *mutex, int type) {
    pthread_mutexattr_t attributes;
    pthread_mutexattr_init(&attributes);
    pthread_mutexattr_settype(&attributes, (type & mtx_recursive) ? PTHREAD_MUTEX_RECURSIVE : PTHREAD_MUTEX_NORMAL);
    int error = pthread_mutex_init((pthread_mutex_t *)mutex, &attributes);
    pthread_mutexattr_destroy(&attributes);
    return c11_result(error);
}

void mtx_destroy(mtx_t *mutex) { pthread_mutex_destroy((pthread_mutex_t *)mutex); }
int mtx_lock(mtx_t *mutex) { return c11_result(pthread_mutex_lock((pthread_mutex_t *)mutex)); }
int mtx_trylock(mtx_t *mutex) { return c11_result(pthread_mutex_trylock((pthread_mutex_t *)mutex)); }
int mtx_unlock(mtx_t *mutex) { return c11_result(pthread_mutex_unlock((pthread_mutex_t *)mutex)); }

int mtx_timedlock(mtx_t *restrict mutex, const struct timespec *restrict deadline) {
    return c11_result(pthread_mutex_timedlock((pthread_mutex_t *)mutex, deadline));
}

int cnd_init(cnd_t *condition) { return c11_result(pthread_cond_init((pthread_cond_t *)condition, NULL)); }
void cnd_destroy(cnd_t *condition) { pthread_cond_destroy((pthread_cond_t *)condition); }
int cnd_signal(cnd_t *condition) { return c11_result(pthread_cond_signal((pthread_cond_t *)condition)); }
int cnd_broadcast(cnd_t *condition) { return c11_result(pthread_cond_broadcast((pthread_cond_t *)condition)); }

int cnd_wait(cnd_t *condition, mtx_t *mutex) {
    return c11_result(pthread_cond_wait((pthread_cond_t *)condition, (pthread_mutex_t *)mutex));
}

int cnd_timedwait(cnd_t *restrict condition, mtx_t *restrict mutex, const struct timespec *restrict deadline) {
    return c11_result(pthread_cond_timedwait((pthread_cond_t *)condition, (pthread_mutex_t *)mutex, deadline));
}
