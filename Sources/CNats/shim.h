// The NATS C client (libnats) for Swift. Its API has no variadic calls or cast macros that the bridge needs, so
// the shim only includes it; helpers would go here with the prefix cnats_.
#ifndef CNATS_SHIM_H
#define CNATS_SHIM_H

#include <nats/nats.h>

#endif
