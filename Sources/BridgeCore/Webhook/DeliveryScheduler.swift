/// Decides which outbox entries of one webhook sink may be attempted now.
///
/// Events of one item (collection + key) are delivered strictly in order: only the oldest pending entry of an item
/// is eligible, and never while an attempt for that item is in flight. Different items run in parallel up to the
/// caller's in-flight limit. A failing item waits on its own retry schedule and never blocks the others.
///
/// Pure bookkeeping in memory (the outbox in SQLite is the durable copy); times are Unix milliseconds.
package struct DeliveryScheduler: Sendable {
    /// One pending delivery.
    package struct Entry: Sendable, Equatable {
        /// The outbox row id (increases with acceptance order).
        package var seq: Int64
        /// `collection` + NUL + `key`: the ordering group.
        package var itemKey: String
        /// When it may be attempted.
        package var dueAt: Int64
    }

    private struct Queue: Sendable {
        var entries: [Entry]
        var head = 0
        var first: Entry? { head < entries.count ? entries[head] : nil }
        var isEmpty: Bool { head >= entries.count }
        mutating func removeFirst() {
            head += 1
            if head > 32 && head * 2 > entries.count {
                entries.removeFirst(head)
                head = 0
            }
        }
    }

    private var queues: [String: Queue] = [:]
    private var inFlight: Set<String> = []
    private var ready = MinHeap()
    /// Entries known (pending or in flight).
    package private(set) var count = 0

    /// Creates an empty scheduler.
    package init() {}

    /// Entries whose attempt is running.
    package var inFlightCount: Int { inFlight.count }

    /// Adds an entry behind the earlier entries of its item (call in `seq` order).
    package mutating func enqueue(_ entry: Entry) {
        count += 1
        // Queues are changed in place through their index (`values[index]`): copying one out and back would copy
        // its array on every change and hash the key twice.
        if let index = queues.index(forKey: entry.itemKey) {
            queues.values[index].entries.append(entry)
        } else {
            queues[entry.itemKey] = Queue(entries: [entry])
            if !inFlight.contains(entry.itemKey) { ready.push(entry) }
        }
    }

    /// Takes up to `limit` entries due at `now`, marking their items in flight.
    package mutating func takeDue(now: Int64, limit: Int) -> [Entry] {
        var taken: [Entry] = []
        while taken.count < limit, let top = ready.peek, top.dueAt <= now {
            ready.pop()
            inFlight.insert(top.itemKey)
            taken.append(top)
        }
        return taken
    }

    /// The earliest time an entry becomes due (nil when nothing waits outside of in-flight items).
    package var nextDueAt: Int64? { ready.peek?.dueAt }

    /// The attempt of `entry` ended and it left the outbox (delivered or dead-lettered): its item's next entry
    /// becomes eligible.
    package mutating func finished(_ entry: Entry) {
        inFlight.remove(entry.itemKey)
        guard let index = queues.index(forKey: entry.itemKey) else { return }
        if queues.values[index].first?.seq == entry.seq {
            queues.values[index].removeFirst()
            count -= 1
        }
        if let next = queues.values[index].first {
            ready.push(next)
        } else {
            queues.remove(at: index)
        }
    }

    /// The attempt of `entry` failed and will be retried at `dueAt`; later entries of its item keep waiting.
    package mutating func rescheduled(_ entry: Entry, dueAt: Int64) {
        inFlight.remove(entry.itemKey)
        guard let index = queues.index(forKey: entry.itemKey), queues.values[index].first?.seq == entry.seq else {
            return
        }
        let head = queues.values[index].head
        queues.values[index].entries[head].dueAt = dueAt
        ready.push(queues.values[index].entries[head])
    }

    /// Removes every entry (e.g. before reloading from the outbox).
    package mutating func removeAll() {
        queues = [:]
        inFlight = []
        ready = MinHeap()
        count = 0
    }
}

/// A binary min-heap of entries ordered by (dueAt, seq).
private struct MinHeap: Sendable {
    private var items: [DeliveryScheduler.Entry] = []

    var peek: DeliveryScheduler.Entry? { items.first }

    mutating func push(_ entry: DeliveryScheduler.Entry) {
        items.append(entry)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(items[child], items[parent]) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() {
        guard !items.isEmpty else { return }
        items.swapAt(0, items.count - 1)
        items.removeLast()
        var parent = 0
        while true {
            let left = parent * 2 + 1
            let right = left + 1
            var smallest = parent
            if left < items.count, less(items[left], items[smallest]) { smallest = left }
            if right < items.count, less(items[right], items[smallest]) { smallest = right }
            if smallest == parent { return }
            items.swapAt(parent, smallest)
            parent = smallest
        }
    }

    private func less(_ a: DeliveryScheduler.Entry, _ b: DeliveryScheduler.Entry) -> Bool {
        a.dueAt != b.dueAt ? a.dueAt < b.dueAt : a.seq < b.seq
    }
}
