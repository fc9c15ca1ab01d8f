// The NATS C client (libnats) for Swift. Helpers carry the prefix cnats_.
#ifndef CNATS_SHIM_H
#define CNATS_SHIM_H

#include <nats/nats.h>

// Frees a message that nothing in libnats refers to any more: one made by natsMsg_Create once
// natsConnection_PublishMsg returned (the publish copied its bytes into the connection's buffer), or one delivered
// to a subscription's handler (taken off the subscription's queue before the call). natsMsg_Destroy would hand it to
// libnats's one collector thread, under a lock of the whole library whose hand-offs and wake-ups cost the publisher
// more than the free itself (BENCHMARKS.md, "Issue 26, item 6: JetStream messages freed without libnats's
// collector"). natsMsg_free is the collector's own free of a message (natsMsg_create makes it the message's free
// callback): libnats 3 exports it but declares it in a header it does not install, so it is declared here; on
// another major version the public destroy is used. Never for a message with libnats's "no destroy" flag: only its
// control messages and JetStream's auto-acknowledging handlers set it, and the bridge uses neither.
#if NATS_VERSION_MAJOR == 3
void natsMsg_free(void *object);
static inline void cnats_freeMessage(natsMsg *message) { natsMsg_free(message); }
#else
static inline void cnats_freeMessage(natsMsg *message) { natsMsg_Destroy(message); }
#endif

#endif
