public import BridgeConfig

/// Text for the `starting` log line and the `check` output: what the bridge writes to, without secrets.
public enum StartupSummary {
    /// `ndjson:-,ndjson:/var/log/changes.ndjson,webhook:https://hooks.example.com/directus` — webhook URLs without
    /// their query string, which may carry a token.
    public static func sinks(_ sinks: [SinkConfig]) -> String {
        sinks.map { sink in
            switch sink {
            case .ndjson(let ndjson): "ndjson:\(ndjson.path)"
            case .webhook(let webhook): "webhook:\(urlWithoutQuery(webhook.url))"
            }
        }.joined(separator: ",")
    }

    /// `https://host:port/path` without `?query`.
    public static func urlWithoutQuery(_ url: HTTPURL) -> String {
        url.scheme + "://" + url.authority + url.path
    }
}
