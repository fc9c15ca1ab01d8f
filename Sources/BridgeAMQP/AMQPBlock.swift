internal import BridgeSystem

/// What a broker holds back on one connection: RabbitMQ's `connection.blocked` (sent when a memory or disk alarm
/// stops it reading publishes; it reads and confirms them once the alarm clears), or a broker that stopped answering
/// without a word (a hung process) while the connection's heartbeat has not declared it dead.
///
/// Publishes sent before the block stay in the connection's socket until then. Given up on and sent again on a new
/// connection, they would be stored twice once the broker reads both; so a publish call that times out while the
/// broker says it blocks keeps the connection, gives up only on waiting (`giveUp`), and the next calls send nothing
/// new until those earlier publishes are answered (`isHolding`). An event confirmed that way is counted as confirmed
/// when it is handed over again (`takeConfirmed`), without a second copy.
struct AMQPBlock {
    /// The broker's reason while it blocks the connection (`connection.blocked`), nil otherwise.
    var reason: String?
    /// Publishes of earlier calls that gave up waiting while the broker blocked: delivery tag → message id.
    private(set) var unanswered: [UInt64: String] = [:]
    /// Of those, the message ids the broker returned (unroutable): their late ack is not a confirmation.
    private var returned: Set<String> = []
    /// Message ids of such publishes the broker confirmed later, until they are handed over again.
    private var confirmed: Set<String> = []

    /// Whether the connection must send nothing new: the broker blocks it, or publishes given up on are unanswered.
    var isHolding: Bool { reason != nil || !unanswered.isEmpty }

    /// Publishes `tags` (tag → message id, and whether the broker returned it) are given up on while blocked.
    mutating func giveUp(_ tags: [(tag: UInt64, messageID: String, returned: Bool)]) {
        for entry in tags {
            unanswered[entry.tag] = entry.messageID
            if entry.returned { returned.insert(entry.messageID) }
        }
    }

    /// The broker answered `tag` (and every tag below it when `multiple`); a nack leaves the event to be sent again.
    mutating func answered(_ tag: UInt64, multiple: Bool, nacked: Bool) {
        guard !unanswered.isEmpty else { return }
        let tags = multiple ? unanswered.keys.filter { $0 <= tag } : [tag]
        for tag in tags {
            guard let messageID = unanswered.removeValue(forKey: tag) else { continue }
            let wasReturned = returned.remove(messageID) != nil
            if !nacked && !wasReturned { confirmed.insert(messageID) }
        }
    }

    /// The broker returned a message with `messageID`: one of the unanswered publishes, if any has that id.
    mutating func returned(messageID: String) {
        if unanswered.values.contains(messageID) { returned.insert(messageID) }
    }

    /// Whether `messageID` was confirmed after its call gave up (once: the mark is removed).
    mutating func takeConfirmed(_ messageID: String) -> Bool {
        // Asked for every message published: without a block behind, not even the id is hashed.
        !confirmed.isEmpty && confirmed.remove(messageID) != nil
    }

    /// The error of a publish the block holds, for `url`'s broker; `timeout`: the confirm timeout that passed.
    func error(url: ServiceURL, timeout: Duration) -> AMQPError {
        guard let reason else {
            return AMQPError(
                kind: .retriable,
                message: "no publisher confirm from \(url) within \(timeout): the broker holds \(unanswered.count) "
                    + "messages sent on this connection (it hangs, or its alarm just cleared); they wait on it, and "
                    + "nothing more is sent until it answers them or misses two heartbeats"
            )
        }
        return AMQPError(
            kind: .retriable,
            message: "the broker at \(url) blocks publishing (\(reason)): a RabbitMQ memory or disk alarm; "
                + "\(unanswered.count) messages sent before wait on this connection, nothing more is sent until it clears"
        )
    }
}
