/// The dotted metadata keys used in log lines, in one place so every component spells them the same.
public enum LogKey {
    public static let error = "error"
    public static let url = "directus.url"
    public static let subscriptionUID = "directus.subscription.uid"
    public static let collection = "directus.collection"
    public static let errorCode = "directus.error.code"
    public static let user = "directus.user"
    public static let tokenTTL = "directus.token.ttl_ms"
    public static let delay = "reconnect.delay"
    public static let reason = "reason"
    public static let attempt = "attempt"
    public static let closeCode = "websocket.close.code"
    public static let sink = "sink"
    /// The positional id a sink had before it was named (its saved progress moved to the name).
    public static let formerSink = "former_sink"
    public static let path = "path"
    public static let count = "count"
    public static let cursor = "cursor"
    public static let mode = "delivery.mode"
    public static let status = "http.status"
    public static let eventID = "event.id"
}
