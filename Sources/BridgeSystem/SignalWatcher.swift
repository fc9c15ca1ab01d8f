#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Dispatch

/// Turns Unix signals into an `AsyncStream`, using dispatch sources so no handler runs in signal context.
///
/// The default action of each watched signal is replaced by `SIG_IGN` while the watcher lives, so a SIGTERM
/// reaches the stream instead of killing the process.
public final class SignalWatcher: @unchecked Sendable {
    // @unchecked: `sources` is written once in init; DispatchSource's cancel() is documented thread-safe.
    /// Signals as they arrive.
    public let signals: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    /// Starts watching `signalNumbers` (e.g. `[SIGINT, SIGTERM, SIGHUP]`).
    public init(_ signalNumbers: [Int32]) {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        self.signals = stream
        var made: [any DispatchSourceSignal] = []
        for number in signalNumbers {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            made.append(source)
        }
        self.sources = made
    }

    /// Stops watching and restores the default actions.
    public func cancel() {
        for source in sources {
            source.cancel()
        }
    }

    /// Ignores SIGPIPE for the whole process: a peer closing a socket must be an error from `write`, not a kill.
    public static func ignoreSIGPIPE() {
        signal(SIGPIPE, SIG_IGN)
    }
}
