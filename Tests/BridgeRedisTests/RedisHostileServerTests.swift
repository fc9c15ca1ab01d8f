import BridgeRedis
import BridgeSystem
import BridgeTestSupport
import Testing

/// The Redis client against a server that misbehaves (Tests/tools/broker_peers/hostile_server.py): every case
/// ends in a typed error within its timeout, never a hang or a crash.
@Suite(.timeLimit(.minutes(2)))
struct RedisHostileServerTests {
    /// The error of one PING to a server in `mode`, and how long the PING took (the server's start not counted).
    private func timedPing(_ mode: String, replyTimeout: Duration = .seconds(10)) async throws
        -> (error: RedisError?, took: Duration)
    {
        let server = try await PythonServer.start(script: "broker_peers/hostile_server.py", arguments: [mode])
        let client = RedisClient(
            settings: try RedisSettings(url: "redis://127.0.0.1:\(server.port)", replyTimeout: replyTimeout)
        )
        let started = ContinuousClock.now
        do {
            try await client.ping()
            return (nil, ContinuousClock.now - started)
        } catch {
            return (error, ContinuousClock.now - started)
        }
    }

    private func ping(_ mode: String) async throws -> RedisError? { try await timedPing(mode).error }

    @Test func aServerThatNeverAnswersTimesOut() async throws {
        let (error, took) = try await timedPing("silent", replyTimeout: .milliseconds(600))
        #expect(
            error?.kind == .retriable && error?.message.contains("no reply") == true,
            "\(String(describing: error))"
        )
        #expect(took < .seconds(TestEnvironment.patient(10)), "a bound, not a hang")
    }

    @Test(arguments: ["redis-garbage", "redis-oversized", "redis-huge-array", "redis-deep"])
    func aBrokenReplyIsAProtocolViolation(mode: String) async throws {
        let error = try await ping(mode)
        #expect(error?.kind == .protocolViolation, "\(mode): \(String(describing: error))")
    }

    @Test func aServerThatClosesAtOnceIsRetriable() async throws {
        let error = try await ping("close")
        #expect(error?.kind == .retriable, "\(String(describing: error))")
    }
}
