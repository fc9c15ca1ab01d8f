import BridgeSystem

/// A TCP relay on loopback in front of a broker, for one connection, that can hold back what the broker sends (what
/// the client sends still passes) until `release()` or a bound: a test makes a client wait for the broker's answer
/// as long as it wants, without stopping a broker other tests share. Its two threads end with the connection.
final class HoldingRelay: Sendable {
    /// How a hold ended.
    enum End: Sendable, Equatable {
        /// `release()` ended it.
        case released
        /// Its bound passed first.
        case gaveUp
    }

    private struct State {
        var holding = false
        var end: End?
    }

    private let listener: ListeningSocket
    private let state = ConditionLock(State())
    private let bound: Duration

    /// The port clients connect to.
    var port: Int { listener.port }

    /// How the last hold ended (nil while holding or before any).
    var end: End? { state.withLock { $0.end } }

    /// Relays the first connection made within a minute to `target`; each hold lasts at most `bound`.
    init(to target: SocketAddress, holdingAtMost bound: Duration) throws {
        listener = try ListeningSocket(binding: SocketAddress(ipAddress: "127.0.0.1", port: 0)!)
        self.bound = bound
        try DetachedThread.start(stackSize: nil) { [self] in serve(target) }
    }

    /// Holds back what the broker sends from now on.
    func hold() { state.withLock { $0.holding = true } }

    /// Lets the held bytes through.
    func release() {
        state.withLock { state in
            guard state.holding else { return }
            state.holding = false
            state.end = .released
        }
        state.broadcast()
    }

    private func serve(_ target: SocketAddress) {
        guard let client = try? listener.accept(until: .now + .seconds(60)),
            let broker = try? Socket.connect(to: target, deadline: .now + .seconds(10))
        else { return }
        do {
            try DetachedThread.start(stackSize: nil) { Self.pump(from: client, to: broker, before: {}) }
        } catch {
            return
        }
        Self.pump(from: broker, to: client) { [self] in waitWhileHolding() }
    }

    private func waitWhileHolding() {
        let deadline = ContinuousClock.now + bound
        state.wait { state in
            guard state.holding else { return ((), nil) }
            let left = deadline - .now
            if left > .zero { return (nil, left) }
            state.holding = false
            state.end = .gaveUp
            return ((), nil)
        }
    }

    /// Copies what `source` sends to `destination` until either side ends; `before` runs before each read.
    private static func pump(from source: Socket, to destination: Socket, before: () -> Void) {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        do {
            while true {
                guard try source.wait(for: .readable, until: .now + .seconds(1)) else { continue }
                before()
                switch try buffer.withUnsafeMutableBytes({ try source.receive(into: $0) }) {
                case .transferred(let count):
                    var sent = 0
                    while sent < count {
                        switch try buffer[sent..<count].withUnsafeBytes({ try destination.send($0) }) {
                        case .transferred(let written): sent += written
                        case .wouldBlock, .endOfStream:
                            _ = try destination.wait(for: .writable, until: .now + .seconds(1))
                        }
                    }
                case .wouldBlock: continue
                case .endOfStream:
                    destination.shutdownWrite()
                    return
                }
            }
        } catch {
            destination.shutdown()
        }
    }
}
