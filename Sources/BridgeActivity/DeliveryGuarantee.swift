package import BridgeEvents
package import BridgeDirectus

/// Which writes each delivery mode delivers (directus-protocol.md §14.1, §14.2), logged at start-up so that a
/// person knows what reaches the sinks: Directus's socket does not report every write, its activity log does not
/// record every write, and the two gaps differ.
public enum DeliveryGuarantee {
    /// Where the whole story is: the README's section (installed in /usr/share/doc/directus-bridge by the .deb).
    static let reference = "README.md \"Which writes each mode delivers\""

    /// Live mode (a warning): the socket's events only.
    public static let live =
        "live mode delivers only the changes Directus's socket reports while the bridge is connected; "
        + "delivery.mode: activity delivers every write Directus records (\(reference))"

    /// Activity mode (information): the activity log's records.
    public static let activity =
        "activity mode delivers every write Directus records in its activity log (\(reference))"
}
