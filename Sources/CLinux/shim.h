// glibc's prctl(2) is variadic, which Swift cannot call: this wrapper makes the one call the bridge needs (libc6-dev,
// nothing to link). Prefix: clinux_.
#ifndef CLINUX_SHIM_H
#define CLINUX_SHIM_H
#include <sys/prctl.h>

static inline int clinux_set_dumpable(int dumpable) {
    return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0UL, 0UL, 0UL);
}
#endif
