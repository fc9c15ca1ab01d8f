// glibc calls Swift cannot make or cannot see (libc6-dev, nothing to link). Prefix: clinux_.
// - prctl(2) is variadic: the one call the bridge needs.
// - mallopt(3) lives in <malloc.h>, which the Glibc module does not export.
#ifndef CLINUX_SHIM_H
#define CLINUX_SHIM_H
#include <malloc.h>
#include <sys/prctl.h>

static inline int clinux_set_dumpable(int dumpable) {
    return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0UL, 0UL, 0UL);
}

static inline int clinux_set_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}
#endif
