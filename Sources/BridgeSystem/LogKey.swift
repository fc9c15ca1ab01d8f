/// The dotted metadata keys used in log lines, in one place so every component spells them the same.
public enum LogKey {
    public static let error = "error"
    public static let url = "directus.url"
    public static let subscriptionUID = "directus.subscription.uid"
    public static let collection = "directus.collection"
    public static let errorCode = "directus.error.code"
    public static let user = "directus.user"
    /// How long a new access token lives (a duration); `directus.token.expires` false when it never expires.
    public static let tokenTTL = "directus.token.ttl"
    public static let delay = "reconnect.delay"
    public static let reason = "reason"
    public static let attempt = "attempt"
    public static let sink = "sink"
    /// The positional id a sink had before it was named (its saved progress moved to the name).
    public static let formerSink = "former_sink"
    public static let path = "path"
    public static let count = "count"
    /// The activity id a cursor stands at (`cursor.head`: how far it has read ahead).
    public static let cursor = "cursor.position"
    public static let mode = "delivery.mode"
    public static let status = "http.status"
    public static let eventID = "event.id"
}
