internal import BridgeEvents

/// Several readers that follow socket events (every sink's activity reader, the sort watcher) behind the one trigger
/// the socket reader calls.
public struct TriggerFanOut: ActivityTrigger {
    private let triggers: [any ActivityTrigger]

    /// The triggers that exist; nil when there is none.
    public static func of(_ triggers: (any ActivityTrigger)?...) -> (any ActivityTrigger)? {
        of(triggers.compactMap { $0 })
    }

    /// The triggers; nil when there is none.
    public static func of(_ triggers: [any ActivityTrigger]) -> (any ActivityTrigger)? {
        triggers.count <= 1 ? triggers.first : TriggerFanOut(triggers: triggers)
    }

    public func changeSeen(collection: String) {
        for trigger in triggers { trigger.changeSeen(collection: collection) }
    }

    public func updateSeen(collection: String, keys: [String], delivered: Bool) {
        for trigger in triggers { trigger.updateSeen(collection: collection, keys: keys, delivered: delivered) }
    }

    public func socketReconnected() {
        for trigger in triggers { trigger.socketReconnected() }
    }
}
