/// The seam between protocol code and HTTP: anything that turns a request into a response.
///
/// `HTTPClient` (one blocking transfer per call on the blocking pool) and `HTTPDeliveryEngine` (many
/// transfers on one curl multi driver) both conform; tests substitute scripted doubles.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the final response (3xx included). Throws `HTTPClientError` when no
    /// complete response arrived, and `.cancelled` when the calling task is cancelled.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}
