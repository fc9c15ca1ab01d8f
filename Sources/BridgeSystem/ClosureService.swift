/// A `Service` made of a name and a closure: for the runtime's wiring, where each service is a few lines.
public struct ClosureService: Service {
    /// A name for logs.
    public let name: String
    private let body: @Sendable (ShutdownSignal) async throws -> Void

    /// Creates a service that runs `body` until its shutdown signal (see `Service.run`).
    public init(_ name: String, _ body: @escaping @Sendable (ShutdownSignal) async throws -> Void) {
        self.name = name
        self.body = body
    }

    public func run(until shutdown: ShutdownSignal) async throws { try await body(shutdown) }
}
