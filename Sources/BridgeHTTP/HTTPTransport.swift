/// The seam between protocol code and HTTP: anything that turns a request into a response.
///
/// `HTTPClient` (one blocking transfer per call on the blocking pool) conforms; tests substitute scripted doubles.
/// Many requests in flight from one loop go through a `DeliveryEngine` instead.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the final response (3xx included). Throws `HTTPClientError` when no
    /// complete response arrived, and `.cancelled` when the calling task is cancelled.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}
