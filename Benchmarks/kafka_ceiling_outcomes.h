// The `outcomes` mode of Benchmarks/kafka_ceiling.c: each message's delivery outcome recorded as a production sink
// needs it for dead letters and redelivery, the cheapest way C can, and no more than the sink does with it.
//
// The messages go in batches of 500 (the sink's `accept`, whose batch becomes one `KafkaDeliveryBatch`). A message's
// opaque is its slot in its batch's record; its delivery report stores the outcome there and counts the batch down
// (as `KafkaDeliveryBatch.record`); the last report settles the batch as the sink's tracker does
// (`BrokerDeliveryTracker.finished`): a batch without failures is counted whole, otherwise each slot is read in
// order (delivered, or to be sent again or stored as a dead letter), and the tracker's pending count and last
// progress move. The records are a ring reused batch after batch: nothing is allocated per batch or per message.
// One thread produces and serves the reports, so plain counts do (the sink's reports may come from its poll thread).
#include <librdkafka/rdkafka.h>
#include <stdint.h>
#include <time.h>

/// One message's outcome, where its delivery report finds it (the message's opaque).
struct slot {
    struct batch *batch;
    int64_t offset;
    int32_t partition;
    int32_t err;
};

/// The record of one batch of at most 500 messages.
struct batch {
    long count, remaining, failures;
    struct slot slots[500];
};

/// Messages in batches not settled yet (the tracker's pending), and what the settled batches held.
static long pending, settledDelivered, settledFailed;
/// When the last batch settled (the tracker's last progress, for its stall check).
static struct timespec progressAt;

/// The batch's last report: every slot has its outcome.
static void settle(struct batch *batch) {
    if (batch->failures == 0) {
        settledDelivered += batch->count;
    } else {
        for (long i = 0; i < batch->count; i++) {
            if (batch->slots[i].err) settledFailed++; else settledDelivered++;
        }
    }
    pending -= batch->count;
    clock_gettime(CLOCK_MONOTONIC, &progressAt);
}

/// Records the outcome of a message produced with `slotOf`'s opaque.
static void recordOutcome(const rd_kafka_message_t *message) {
    struct slot *slot = message->_private;
    slot->err = message->err;
    slot->partition = message->partition;
    slot->offset = message->offset;
    struct batch *batch = slot->batch;
    if (message->err) batch->failures++;
    if (--batch->remaining == 0) settle(batch);
}

/// Starts a batch of `count` messages in the ring's next record, once that record's last batch has settled.
static struct batch *begin(rd_kafka_t *rk, struct batch *ring, long ringSize, long *next, long count) {
    struct batch *batch = &ring[(*next)++ % ringSize];
    while (batch->remaining > 0) rd_kafka_poll(rk, 1);
    batch->count = batch->remaining = count;
    batch->failures = 0;
    pending += count;
    return batch;
}

/// The opaque of message `index` of `batch`.
static struct slot *slotOf(struct batch *batch, long index) {
    struct slot *slot = &batch->slots[index];
    slot->batch = batch;
    return slot;
}
