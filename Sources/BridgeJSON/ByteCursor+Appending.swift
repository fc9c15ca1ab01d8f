// Appending what a `ByteCursor` writes to a byte array.
extension Array where Element == UInt8 {
    /// Appends what `body` writes through a ``ByteCursor``: straight into the array's spare capacity when `bound`
    /// bytes fit there, else into a scratch buffer of `bound` bytes copied in once (the array then grows by what was
    /// written, not by the bound). `body` must not write more than `bound` bytes.
    mutating func appendWriting(bound: Int, _ body: (inout ByteCursor) -> Void) {
        if capacity - count >= bound {
            // Each byte written once, not into the scratch and then again into the array: a socket read's lines go
            // into one buffer with room for them (`ReadEvents`).
            append(addingCapacity: bound) { span in
                span.withUnsafeMutableBufferPointer { buffer, initialized in
                    let start = buffer.baseAddress.unsafelyUnwrapped
                    var cursor = ByteCursor(start)
                    body(&cursor)
                    initialized = cursor.count(from: start)
                    // Too late to undo an overrun, but stop before anything else runs on corrupted memory.
                    precondition(initialized <= bound, "ByteCursor wrote past its bound")
                }
            }
            return
        }
        // Up to 1 KiB the scratch lives on the stack. Above that, `withUnsafeTemporaryAllocation` would ask the
        // runtime about the thread's stack bounds (slow on Linux), so a plain heap buffer is used instead.
        if bound <= 1_024 {
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Swift.max(bound, 1)) { scratch in
                appendWritten(into: scratch.baseAddress.unsafelyUnwrapped, bound: bound, body)
            }
        } else {
            let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: bound)
            defer { scratch.deallocate() }
            appendWritten(into: scratch, bound: bound, body)
        }
    }

    private mutating func appendWritten(
        into start: UnsafeMutablePointer<UInt8>,
        bound: Int,
        _ body: (inout ByteCursor) -> Void
    ) {
        var cursor = ByteCursor(start)
        body(&cursor)
        let count = cursor.count(from: start)
        // Too late to undo an overrun, but stop before anything else runs on corrupted memory.
        precondition(count <= bound, "ByteCursor wrote past its bound")
        append(contentsOf: UnsafeBufferPointer(start: start, count: count))
    }
}
