import BridgeHTTP
import BridgeSystem
import Foundation

/// A scripted `DeliveryEngine` for the delivery service: `respond` answers each request (it may sleep, throw, hang
/// until a gate opens, or until the request is aborted), and the engine keeps the contract the real
/// `HTTPDeliveryEngine` keeps — at most `maxInFlight` requests running and the rest waiting in order, every request
/// answered exactly once through its `DeliveryReceiver` from a thread of the engine's own, withdrawn and aborted
/// requests answered `.cancelled` (`sent` false for those that never started). So the service under test runs the
/// code it runs in production.
///
/// Every request that starts is recorded with its time; a request that starts while another of the same item runs
/// is counted (`overlaps`, must stay 0).
final class FakeEngine: DeliveryEngine, @unchecked Sendable {
    // @unchecked: every mutable property is only touched under `lock`.

    /// A request as it started.
    struct Sent {
        var request: HTTPRequest
        var at: ContinuousClock.Instant
        var id: String
        var item: String
    }

    typealias Respond = @Sendable (_ request: HTTPRequest, _ attempt: Int) async throws -> HTTPResponse

    private struct Job {
        var id: UInt64
        var tag: Int64
        var request: HTTPRequest
        var receiver: DeliveryReceiver
    }

    private struct Running {
        var job: Job
        var item: String
        var task: Task<Void, Never>?
    }

    private typealias Answer = (receiver: DeliveryReceiver, completion: DeliveryReceiver.Completion)

    private let lock = NSLock()
    private let maxInFlight: Int
    private let respond: Respond
    /// The engine's own thread: requests run and answers are delivered there, as the real driver does on its own.
    private let executor = DedicatedThreadExecutor(name: "fake-engine")
    private var nextID: UInt64 = 0
    private var waiting: [Job] = []
    private var running: [UInt64: Running] = [:]
    private var stopped = false
    private var sentRequests: [Sent] = []
    private var attemptsByID: [String: Int] = [:]
    private var busyItems: Set<String> = []
    private var overlapCount = 0
    private var peak = 0
    private var peakHeld = 0
    private var abortedCount = 0

    /// Creates an engine that runs at most `maxInFlight` requests at once; by default every answer is a 204.
    init(maxInFlight: Int = 8, _ respond: @escaping Respond = { _, _ in HTTPResponse(status: 204) }) {
        self.maxInFlight = maxInFlight
        self.respond = respond
    }

    deinit {
        executor.shutdown()
    }

    func submit(_ requests: [(tag: Int64, request: HTTPRequest)], to receiver: DeliveryReceiver) {
        let answers = lock.withLock { () -> [Answer] in
            let jobs = requests.map { entry in
                nextID += 1
                return Job(id: nextID, tag: entry.tag, request: entry.request, receiver: receiver)
            }
            if stopped { return jobs.map { Self.cancelled($0, sent: false) } }
            waiting.append(contentsOf: jobs)
            peakHeld = max(peakHeld, waiting.count + running.count)
            startWaitingJobs()
            return []
        }
        post(answers)
    }

    func cancelWaiting(of receiver: DeliveryReceiver) {
        post(lock.withLock { withdrawWaiting(of: receiver) })
    }

    func cancelAll(of receiver: DeliveryReceiver) {
        let answers = lock.withLock { () -> [Answer] in
            var answers = abortRunning { $0.receiver === receiver }
            answers += withdrawWaiting(of: receiver)
            startWaitingJobs()
            return answers
        }
        post(answers)
    }

    func shutdown() async {
        let (answers, tasks) = lock.withLock { () -> ([Answer], [Task<Void, Never>]) in
            stopped = true
            let tasks = running.values.compactMap(\.task)
            let answers = abortRunning { _ in true } + waiting.map { Self.cancelled($0, sent: false) }
            waiting.removeAll()
            return (answers, tasks)
        }
        post(answers)
        for task in tasks { await task.value }
    }

    // MARK: - What the test reads

    /// Every request that started, in order.
    var sent: [Sent] { lock.withLock { sentRequests } }
    /// Times a request started while another one of the same item was running (must stay 0).
    var overlaps: Int { lock.withLock { overlapCount } }
    /// The most requests running at once.
    var peakConcurrency: Int { lock.withLock { peak } }
    /// The most requests held at once, running or waiting for a slot (what the service handed out ahead).
    var peakOutstanding: Int { lock.withLock { peakHeld } }
    /// Requests aborted while running (`cancelAll`, `shutdown`).
    var cancelled: Int { lock.withLock { abortedCount } }
    /// Requests running now.
    var inFlight: Int { lock.withLock { running.count } }

    // MARK: - Under the lock

    /// Starts waiting jobs, in order, while a slot is free.
    private func startWaitingJobs() {
        while running.count < maxInFlight, !waiting.isEmpty {
            let job = waiting.removeFirst()
            let id = job.request.header("webhook-id") ?? ""
            let object = (try? JSONSerialization.jsonObject(with: Data(job.request.body ?? []))) as? [String: Any]
            let item = "\(object?["collection"] ?? "")/\(object?["key"] ?? "")"
            sentRequests.append(Sent(request: job.request, at: .now, id: id, item: item))
            attemptsByID[id, default: 0] += 1
            if !busyItems.insert(item).inserted { overlapCount += 1 }
            let attempt = attemptsByID[id]!
            running[job.id] = Running(job: job, item: item)
            peak = max(peak, running.count)
            // The task cannot finish before it is stored: `finished` takes the lock this runs under.
            running[job.id]?.task = Task(executorPreference: executor) { [respond] in
                let result: Result<HTTPResponse, HTTPClientError>
                do {
                    result = .success(try await respond(job.request, attempt))
                } catch let error as HTTPClientError {
                    result = .failure(error)
                } catch is CancellationError {
                    result = .failure(HTTPClientError(kind: .cancelled, message: "cancelled", url: job.request.url))
                } catch {
                    result = .failure(HTTPClientError(kind: .other, message: "\(error)", url: job.request.url))
                }
                self.finished(job.id, result)
            }
        }
    }

    /// Aborts the running jobs `matching` selects (their tasks are cancelled; what they return later is dropped).
    private func abortRunning(matching: (Job) -> Bool) -> [Answer] {
        var answers: [Answer] = []
        for (id, entry) in running where matching(entry.job) {
            running.removeValue(forKey: id)
            busyItems.remove(entry.item)
            entry.task?.cancel()
            abortedCount += 1
            answers.append(Self.cancelled(entry.job, sent: true))
        }
        return answers
    }

    private func withdrawWaiting(of receiver: DeliveryReceiver) -> [Answer] {
        let withdrawn = waiting.filter { $0.receiver === receiver }
        waiting.removeAll { $0.receiver === receiver }
        return withdrawn.map { Self.cancelled($0, sent: false) }
    }

    private static func cancelled(_ job: Job, sent: Bool) -> Answer {
        let error = HTTPClientError(kind: .cancelled, message: "request cancelled", url: job.request.url)
        return (job.receiver, DeliveryReceiver.Completion(tag: job.tag, result: .failure(error), sent: sent))
    }

    // MARK: - Answers

    /// A running request returned: answer it (unless it was aborted meanwhile) and start the next waiting one.
    private func finished(_ id: UInt64, _ result: Result<HTTPResponse, HTTPClientError>) {
        let answers = lock.withLock { () -> [Answer] in
            guard let entry = running.removeValue(forKey: id) else { return [] }
            busyItems.remove(entry.item)
            startWaitingJobs()
            return [(entry.job.receiver, DeliveryReceiver.Completion(tag: entry.job.tag, result: result, sent: true))]
        }
        post(answers)
    }

    /// Delivers `answers` on the engine's thread, one call per receiver, in order: never inside the caller's call.
    private func post(_ answers: [Answer]) {
        guard !answers.isEmpty else { return }
        Task(executorPreference: executor) {
            var batches: [(DeliveryReceiver, [DeliveryReceiver.Completion])] = []
            for answer in answers {
                if let index = batches.firstIndex(where: { $0.0 === answer.receiver }) {
                    batches[index].1.append(answer.completion)
                } else {
                    batches.append((answer.receiver, [answer.completion]))
                }
            }
            for (receiver, completions) in batches { receiver.deliver(completions) }
        }
    }
}
