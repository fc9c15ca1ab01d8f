import Foundation

/// The out-of-process peers of `json-hot-path`: the same frame → line transform in C++ with simdjson
/// (`Benchmarks/json_hot_path_simdjson.cpp`, built by Benchmarks/run next to this executable) and in Python with
/// orjson (`Tests/tools/bench/json_hot_path_orjson.py`, in the .venv of scripts/bootstrap.sh). Each reads the frame
/// from a file, measures its own thread's CPU time and prints its best items/s.
struct JSONHotPathPeer {
    let name: String
    let executable: String
    let leadingArguments: [String]

    /// simdjson's DOM parser: the whole frame validated as ours validates it; items re-serialised (`minify`).
    static let simdjsonDOM = simdjson(mode: "dom", name: "C++ simdjson DOM (validates all, minify)")
    /// simdjson On-Demand: values checked only where read; items copied as raw bytes (as ours are).
    static let simdjsonOnDemand = simdjson(mode: "ondemand", name: "C++ simdjson On-Demand (raw item bytes)")
    /// orjson: parse, build the event object, encode.
    static let orjson = JSONHotPathPeer(
        name: "Python orjson parse + encode", executable: BenchmarkEmulator.python,
        leadingArguments: [BenchmarkEmulator.tool("bench/json_hot_path_orjson.py")])

    static func simdjson(mode: String, name: String) -> JSONHotPathPeer {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("json-hot-path-simdjson").path
        return JSONHotPathPeer(name: name, executable: binary, leadingArguments: [mode])
    }

    /// The best items/s of `runs` runs of `messages` messages of `frame`.
    func rate(frame: [UInt8], messages: Int, runs: Int) throws -> Double {
        let output = try run(frame: frame, arguments: ["\(messages)", "\(runs)"], environment: [:])
        let text = String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let rate = Double(text), rate > 0
        else { throw BenchmarkError(message: "\(name) printed no rate") }
        return rate
    }

    /// The lines the peer writes for one message of `frame`.
    func lines(frame: [UInt8]) throws -> [[UInt8]] {
        let output = try run(frame: frame, arguments: ["1", "1"], environment: ["JSON_HOT_PATH_PRINT": "1"])
        return output.split(separator: 0x0A).map { Array($0) }
    }

    private func run(frame: [UInt8], arguments: [String], environment: [String: String]) throws -> [UInt8] {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw BenchmarkError(message: "\(executable) is missing: Benchmarks/run builds and installs the peers")
        }
        let file = FileManager.default.temporaryDirectory
            .appendingPathComponent("json-hot-path-\(getpid())-\(frame.count).json")
        try Data(frame).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = leadingArguments + [file.path] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchmarkError(message: "\(name) exited with \(process.terminationStatus)")
        }
        return Array(output)
    }
}
