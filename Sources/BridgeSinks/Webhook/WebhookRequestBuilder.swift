package import BridgeHTTP
internal import BridgeEvents

/// Builds the POST of one webhook attempt (README.md "Webhooks").
///
/// The body is the stored event object, byte for byte, on every attempt; only `webhook-timestamp` and the
/// signature change between attempts, and the signature is made with the secrets configured now (a replayed
/// dead letter is signed with the current secret, not the one it failed with).
package struct WebhookRequestBuilder: Sendable {
    /// The receiver's URL.
    package var url: String
    /// `directus-bridge/<version>`.
    package var userAgent: String
    /// The body's media type: `application/json`, or `application/cloudevents+json` for `format: cloudevents`.
    package var contentType: String
    /// The sink's extra headers, sent after the bridge's own.
    package var extraHeaders: [(name: String, value: String)]
    /// The per-attempt time limit.
    package var timeout: Duration
    /// The sink's signer.
    package var signer: WebhookSigner

    /// Creates a builder.
    package init(
        url: String,
        userAgent: String,
        contentType: String = EventEncoder.plain.contentType,
        extraHeaders: [(name: String, value: String)],
        timeout: Duration,
        signer: WebhookSigner
    ) {
        self.url = url
        self.userAgent = userAgent
        self.contentType = contentType
        self.extraHeaders = extraHeaders
        self.timeout = timeout
        self.signer = signer
    }

    /// The request for event `id` with `body`, attempted at Unix second `timestamp`. `webhook-id` is the id as a
    /// header value (``EventID/headerValue(_:)``: the id itself for every id the bridge makes), and the signature
    /// covers exactly that value, as Standard Webhooks receivers verify it.
    package func request(id: String, body: [UInt8], timestamp: Int64) -> HTTPRequest {
        let webhookID = EventID.headerValue(id)
        var headers: [(name: String, value: String)] = [
            ("content-type", contentType),
            ("user-agent", userAgent),
            ("webhook-id", webhookID),
            ("webhook-timestamp", String(timestamp)),
        ]
        if let signature = signer.signature(id: webhookID, timestamp: timestamp, body: body) {
            headers.append(("webhook-signature", signature))
        }
        headers.append(contentsOf: extraHeaders)
        return HTTPRequest(method: "POST", url: url, headers: headers, body: body, timeout: timeout)
    }
}
