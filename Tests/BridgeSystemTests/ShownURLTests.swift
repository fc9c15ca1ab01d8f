import BridgeSystem
import Testing

/// Contract 0.3, "Showing a URL": `scheme://host:port` only, never user information, path, query or fragment.
@Suite struct ShownURLTests {
    @Test(arguments: [
        ("https://hooks.slack.com/services/T0/B0/SecretToken", "https://hooks.slack.com:443"),
        ("http://user:pw@127.0.0.1:8080/api/webhooks/1/tok?key=q#frag", "http://127.0.0.1:8080"),
        ("HTTPS://[::1]/cms?x", "https://[::1]:443"),
        ("wss://cms.example.com/websocket?access_token=t", "wss://cms.example.com:443"),
        ("nats://bob:natspw@nats-1", "nats://nats-1:4222"),
        ("tls://token@nats-2:4443", "tls://nats-2:4443"),
        ("sasl_ssl://broker:9093/1", "sasl_ssl://broker:9093"),
        ("kafka-1:9092", "kafka-1:9092"),
        ("redis://user:pw@redis-1/0", "redis://redis-1:6379"),
        ("amqps://user:pw@rabbit-1/vhost", "amqps://rabbit-1:5671"),
        ("mqtt://mqtt-1", "mqtt://mqtt-1:1883"),
    ])
    func aURLIsShownAsSchemeHostAndPort(url: String, shown: String) {
        #expect(ShownURL.of(url) == shown)
    }

    @Test func partsAreShownTheSameWay() {
        #expect(ShownURL.of(scheme: "HTTPS", host: "::1", port: 8443) == "https://[::1]:8443")
        #expect(ShownURL.of(scheme: "http", host: "example.com", port: 80) == "http://example.com:80")
    }

    /// curl's error texts, and any text the bridge did not write, may quote a URL: each one in it is shown so.
    @Test func everyURLInATextIsShownSo() {
        #expect(
            ShownURL.scrubbing("Failed to connect to http://u:p@h:81/a/SECRET?q=1 and 'https://x/y' [ws://z/p]")
                == "Failed to connect to http://h:81 and 'https://x:443' [ws://z:80]")
        #expect(ShownURL.scrubbing("no URL here: a://") == "no URL here: a://")
        #expect(ShownURL.scrubbing("bare ://host/path stays") == "bare ://host/path stays")
        #expect(ShownURL.scrubbing("plain text") == "plain text")
    }
}
