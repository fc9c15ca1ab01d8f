internal import BridgeJSON

/// The part of a batch that a pipe (or a device) took before its write failed (a FIFO's reader gone, an I/O error of
/// a terminal). What a pipe took cannot be taken back: writing the whole batch again would put a torn line and a
/// second copy of every line before it into the stream, so the runner's retry of the same batch writes only the
/// rest. A regular file is cut back instead (`FileRewindPoint`).
struct NDJSONUnfinishedBatch {
    /// The batch's first event.
    let first: EventIdentifier
    /// How many events it has.
    let count: Int
    /// Its bytes, newlines included.
    let length: Int
    /// How many of them are out.
    let written: Int

    /// Where to start writing a batch of `count` events and `length` bytes starting with `first`: after what is out
    /// when it is this batch again (the runner retries a failed batch as it was), else at its start.
    func resumeOffset(first: EventIdentifier, count: Int, length: Int) -> Int {
        first == self.first && count == self.count && length == self.length ? written : 0
    }
}
