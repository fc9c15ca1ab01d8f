/// What a message's delivery report finds through its opaque (`KafkaDeliveryBatch`): its batch and index, and once
/// reported, where it was delivered (a failure's error is kept by the batch).
struct KafkaDeliveryEntry {
    /// Whether the message has an outcome, and which.
    enum State: UInt8 {
        case pending, delivered, failed
    }

    /// The batch's address (unretained: the batch holds itself until its last outcome).
    let batch: UnsafeMutableRawPointer
    /// The message's index in its batch.
    let index: Int
    var state = State.pending
    var partition: Int32 = -1
    var offset: Int64 = -1

    init(batch: UnsafeMutableRawPointer, index: Int) {
        self.batch = batch
        self.index = index
    }
}
