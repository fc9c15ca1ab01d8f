import CCurl

/// One easy handle with a private multi handle, running one transfer at a time to completion on the calling
/// (blocking-pool) thread.
///
/// This is what `curl_easy_perform` does inside (a private multi polled with a one-second timeout), driven
/// by hand so that a cancelled task wakes the poll at once through `curl_multi_wakeup` instead of waiting
/// for the next progress callback. The multi handle keeps the connection cache, so connections are reused
/// from one request to the next on the same `CurlTransfer`.
final class CurlTransfer {
    private let easy: CurlEasyHandle
    private let multi: CurlMultiHandle

    /// Makes the pair of handles.
    init() throws(HTTPClientError) {
        easy = try CurlEasyHandle.make()
        multi = try CurlMultiHandle.make()
    }

    /// Runs `request` to completion, blocking the calling thread.
    func perform(
        _ request: HTTPRequest,
        options: HTTPClientOptions,
        cancellation: CancellationFlag
    ) throws(HTTPClientError) -> HTTPResponse {
        try easy.prepare(request, options: options, cancellation: cancellation)
        try multi.add(easy)
        cancellation.attach(multi.waker)
        defer {
            cancellation.detach()  // before the multi handle can be reused by another request or freed
            multi.remove(easy)  // aborts an unfinished transfer and closes its connection
        }
        while true {
            if cancellation.isCancelled {
                _ = easy.finish(code: CURLE_ABORTED_BY_CALLBACK)
                throw HTTPClientError(kind: .cancelled, curlCode: Int(CURLE_ABORTED_BY_CALLBACK.rawValue),
                    message: "request cancelled", url: request.url)
            }
            try multi.perform()
            if let completion = multi.nextCompletion() {
                return try easy.finish(code: completion.code).get()
            }
            // Returns early on socket activity, curl's own timers, or a wake-up from `cancel()`.
            try multi.poll(timeoutMilliseconds: 1000)
        }
    }
}

@available(*, unavailable)
extension CurlTransfer: Sendable {}
