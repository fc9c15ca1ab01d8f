internal import BridgeEvents

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
        /// A 64-bit hash of `itemKey` (FNV-1a) that the scheduler groups by. Two items whose hashes collide are
        /// delivered as one, one event at a time in `seq` order: stricter than needed, never out of order — and
        /// unlike Swift's `String` hashing it is computed once per entry, not on every dictionary step.
        package let itemHash: Int64

        /// Creates an entry.
        package init(seq: Int64, itemKey: String, dueAt: Int64) {
            self.seq = seq
            self.itemKey = itemKey
            self.dueAt = dueAt
            self.itemHash = Self.hash(itemKey)
        }

        /// FNV-1a, 64 bits, over the key's UTF-8.
        package static func hash(_ key: String) -> Int64 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in key.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
            return Int64(bitPattern: hash)
        }
    }

    /// An item with entries pending, in a slot of `items`. Slots are reused, so the heap and the hot paths work on
    /// small integers and plain values: items are found by `itemHash` (an `Int64` key) when they appear and when
    /// they leave, not by their String key on every step (with a deep outbox of distinct items the String
    /// dictionaries and the retains of moving String-carrying entries through the heap were a tenth of the
    /// delivery loop's time).
    private struct Item: Sendable {
        package var hash: Int64
        /// The item's entries in `seq` order from `head`; the head is the one eligible or in flight.
        package var pending: [Entry]
        package var head = 0
        package var inFlight = false

        package var first: Entry? { head < pending.count ? pending[head] : nil }

        package mutating func removeFirst() {
            head += 1
            if head > 32 && head * 2 > pending.count {
                pending.removeFirst(head)
                head = 0
            }
        }
    }

    private var slots: [Int64: Int32] = [:]
    private var items: [Item] = []
    private var freeSlots: [Int32] = []
    private var ready = MinHeap()
    /// Entries known (pending or in flight).
    package private(set) var count = 0
    /// Entries whose attempt is running.
    package private(set) var inFlightCount = 0

    /// Creates an empty scheduler.
    package init() {}

    /// Adds an entry behind the earlier entries of its item (call in `seq` order).
    package mutating func enqueue(_ entry: Entry) {
        count += 1
        if let slot = slots[entry.itemHash] {
            items[Int(slot)].pending.append(entry)
            return
        }
        let item = Item(hash: entry.itemHash, pending: [entry])
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
            items[Int(slot)] = item
        } else {
            slot = Int32(items.count)
            items.append(item)
        }
        slots[entry.itemHash] = slot
        ready.push(.init(dueAt: entry.dueAt, seq: entry.seq, slot: slot))
    }

    /// Takes up to `limit` entries due at `now`, marking their items in flight.
    package mutating func takeDue(now: Int64, limit: Int) -> [Entry] {
        var taken: [Entry] = []
        while taken.count < limit, let top = ready.peek, top.dueAt <= now {
            ready.pop()
            let index = Int(top.slot)
            // Only an item's current head is ever pushed; anything else would be a stale heap entry.
            guard var entry = items[index].first, entry.seq == top.seq, !items[index].inFlight else { continue }
            items[index].inFlight = true
            inFlightCount += 1
            entry.dueAt = top.dueAt
            taken.append(entry)
        }
        return taken
    }

    /// The earliest time an entry becomes due (nil when nothing waits outside of in-flight items).
    package var nextDueAt: Int64? { ready.peek?.dueAt }

    /// The attempt of `entry` ended and it left the outbox (delivered or dead-lettered): its item's next entry
    /// becomes eligible.
    package mutating func finished(_ entry: Entry) {
        guard let slot = slots[entry.itemHash] else { return }
        let index = Int(slot)
        land(index)
        if items[index].first?.seq == entry.seq {
            items[index].removeFirst()
            count -= 1
        }
        if let next = items[index].first {
            ready.push(.init(dueAt: next.dueAt, seq: next.seq, slot: slot))
        } else {
            slots[items[index].hash] = nil
            items[index] = Item(hash: 0, pending: [])
            freeSlots.append(slot)
        }
    }

    /// The attempt of `entry` failed and will be retried at `dueAt`; later entries of its item keep waiting.
    package mutating func rescheduled(_ entry: Entry, dueAt: Int64) {
        guard let slot = slots[entry.itemHash] else { return }
        let index = Int(slot)
        land(index)
        guard items[index].first?.seq == entry.seq else { return }
        items[index].pending[items[index].head].dueAt = dueAt
        ready.push(.init(dueAt: dueAt, seq: entry.seq, slot: slot))
    }

    /// The attempt of item `index`'s head is over (whatever its outcome).
    private mutating func land(_ index: Int) {
        guard items[index].inFlight else { return }
        items[index].inFlight = false
        inFlightCount -= 1
    }
}

/// A binary min-heap of eligible heads ordered by (dueAt, seq); plain values, so moving them costs no retains.
private struct MinHeap: Sendable {
    package struct Element: Sendable {
        package var dueAt: Int64
        package var seq: Int64
        package var slot: Int32
    }

    private var items: [Element] = []

    package var peek: Element? { items.first }

    package mutating func push(_ element: Element) {
        items.append(element)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(items[child], items[parent]) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    package mutating func pop() {
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

    private func less(_ a: Element, _ b: Element) -> Bool {
        a.dueAt != b.dueAt ? a.dueAt < b.dueAt : a.seq < b.seq
    }
}
