package import BridgeEvents
package import BridgeDirectus

/// Which writes each delivery mode delivers (directus-protocol.md §14.1, §14.2), logged at start-up so that a
/// person knows what reaches the sinks: Directus's socket does not report every write, its activity log does not
/// record every write, and the two gaps differ.
public enum DeliveryGuarantee {
    /// Live mode (a warning): what only the socket's events can deliver.
    public static let live =
        "live mode delivers only the changes Directus's socket reports while the bridge is connected; lost are "
        + "changes made while it is disconnected, writes with events off (Flows without \"Emit Events\", "
        + "extensions with emitEvents: false), events Directus drops, and writes handled by another Directus "
        + "instance unless every instance uses the Redis messenger (REDIS or MESSENGER_STORE=redis); "
        + "delivery.mode: activity delivers every write Directus records in its activity log"

    /// Activity mode (information): what the activity log holds and what it does not.
    public static let activity =
        "activity mode delivers every write Directus records in its activity log (made with a user's, a role's "
        + "or the public role's permissions, to a collection with activity tracking on), whether or not its socket "
        + "event arrives and whichever Directus instance handled it; writes with full access (Flow operations "
        + "with \"Full Access\", extensions without an accountability) and direct SQL are recorded nowhere and "
        + "never delivered"
}
