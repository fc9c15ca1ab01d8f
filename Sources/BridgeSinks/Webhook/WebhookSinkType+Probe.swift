internal import BridgeConfig
internal import BridgeHTTP
package import BridgeEvents
internal import BridgeSystem

// MARK: - Webhook receivers

extension WebhookSinkType {
    /// `check`: whether the receiver answers.
    package static func probe(_ webhook: WebhookSinkConfig, context: SinkProbeContext) async -> [CheckResult] {
        [await checkWebhook(webhook, context)]
    }

    /// Probes go through an HTTP client of their own, verifying as deliveries do: the system store plus `caFile`,
    /// never unverified.
    private static func transport(_ webhook: WebhookSinkConfig, _ context: SinkProbeContext) -> any HTTPTransport {
        HTTPClient(
            options: HTTPClientOptions(caFile: webhook.caFile, userAgent: context.userAgent, proxy: webhook.proxy),
            logger: context.logger.child(label: "http"))
    }

    /// Whether the receiver answers: a HEAD request (any answer below 500 but 404 and 410 counts, since many
    /// receivers route only POST), or with `--send-test-event` a signed test event that must be accepted with 2xx.
    /// 404 and 410 fail either way: every delivery answered so is dead-lettered.
    package static func checkWebhook(_ webhook: WebhookSinkConfig, _ context: SinkProbeContext) async -> CheckResult {
        let name = context.checkName(type: "webhook", target: webhook.url.shown)
        var headers = webhook.headers.map { (name: $0.name, value: $0.value) }
        headers.append(("user-agent", context.userAgent))
        var request = HTTPRequest(method: "HEAD", url: webhook.url.description, timeout: webhook.timeout)
        var event: SinkTestEvent?
        if context.sendTestEvent {
            let test = context.testEvent
            headers += [
                ("content-type", context.encoder.contentType), ("webhook-id", test.id),
                ("webhook-timestamp", "\(test.timestamp)"),
            ]
            if let signature = test.signature(secrets: webhook.signingSecrets) {
                headers.append(("webhook-signature", signature))
            }
            request = HTTPRequest(
                method: "POST",
                url: webhook.url.description,
                body: test.body,
                timeout: webhook.timeout
            )
            event = test
        }
        request.headers = headers
        let response: HTTPResponse
        do {
            response = try await transport(webhook, context).send(request)
        } catch {
            let tls = (error as? HTTPClientError)?.kind == .tls
            return .fail(
                name,
                "no answer: \(error)",
                remedy: tls
                    ? "if the receiver's certificate comes from an in-house CA, put that CA in directus.tls.ca_file"
                    : "check the URL and that the receiver runs and is reachable from this host"
            )
        }
        if response.status == 404 || response.status == 410 {
            // Deliveries answered 404 or 410 are dead-lettered at once (README.md, "Retries"): every event would be.
            let method = event == nil ? "HEAD" : "the test event"
            return .fail(
                name,
                "answers \(method) with HTTP \(response.status): every delivery to it would be dead-lettered",
                remedy: "check the path in sinks[].url and that the receiver's endpoint exists"
                    + (event == nil ? " (a receiver that routes only POST: confirm with --send-test-event)" : "")
            )
        }
        guard let event else {
            if response.status >= 500 {
                return .fail(
                    name,
                    "answers HEAD with HTTP \(response.status)",
                    remedy: "the receiver is failing; or try --send-test-event if it does not handle HEAD"
                )
            }
            return .ok(name, "answers (HEAD: HTTP \(response.status)); --send-test-event also tests signing")
        }
        let signed = webhook.signingSecrets.isEmpty ? "an unsigned" : "a signed"
        if response.isSuccess {
            return .ok(name, "accepted \(signed) test event \(event.id) (HTTP \(response.status))")
        }
        let remedy =
            switch response.status {
            case 401, 403: "check that the receiver verifies with the same secret as the sink's secret"
            case 400, 422: "the receiver rejected the body; it must accept (or ignore) type directus.bridge.test"
            case 300..<400: "redirects are not followed: use the final URL"
            default: "see the receiver's logs"
            }
        return .fail(name, "\(signed) test event got HTTP \(response.status)", remedy: remedy)
    }
}
