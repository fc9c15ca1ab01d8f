import BridgeRedis
import BridgeSystem
import BridgeTestSupport
import Testing

/// The Redis client against a server that misbehaves (Tests/tools/broker_peers/hostile_server.py): every case
/// ends in a typed error within its timeout, never a hang or a crash.
@Suite(.timeLimit(.minutes(2)))
struct RedisHostileServerTests {
    private func ping(_ mode: String, replyTimeout: Duration = .seconds(10)) async throws -> RedisError? {
        let server = try await PythonServer.start(script: "broker_peers/hostile_server.py", arguments: [mode])
        let client = RedisClient(
            settings: try RedisSettings(url: "redis://127.0.0.1:\(server.port)", replyTimeout: replyTimeout)
        )
        do {
            try await client.ping()
            return nil
        } catch {
            return error
        }
    }

    @Test func aServerThatNeverAnswersTimesOut() async throws {
        let started = ContinuousClock.now
        let error = try await ping("silent", replyTimeout: .milliseconds(600))
        #expect(
            error?.kind == .retriable && error?.message.contains("no reply") == true,
            "\(String(describing: error))"
        )
        #expect(ContinuousClock.now - started < .seconds(TestEnvironment.patient(10)), "a bound, not a hang")
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
