import Foundation

#if BRIDGE_FUZZING
    import CLibFuzzer
#endif

/// `bridge-fuzz TARGET [ARGUMENTS…]`: the fuzz targets of docs/RELIABILITY.md ("Fuzzing") in one binary.
///
/// Built with `-sanitize=fuzzer,address -DBRIDGE_FUZZING` (`scripts/fuzz.sh`), the arguments after the target's
/// name go to libFuzzer (flags, then corpus directories). A normal build replays files instead: each argument is
/// an input file or a directory of them, run once through the target; that reproduces a crash artifact without the
/// fuzzing toolchain, and keeps the targets compiling with every `swift build`.
@main
enum FuzzMain {
    /// The target libFuzzer's callback runs. Written once in `main` before libFuzzer starts, which then calls the
    /// callback on this same thread only (libFuzzer's `-jobs`/`-workers` fork processes, not threads).
    nonisolated(unsafe) static var selected: FuzzTarget?

    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count >= 2, let target = FuzzTargets.named(arguments[1]) else {
            var usage = "usage: bridge-fuzz TARGET [libFuzzer flags and corpus directories | input files]\ntargets:\n"
            for target in FuzzTargets.all { usage += "  \(target.name): \(target.summary)\n" }
            FileHandle.standardError.write(Data(usage.utf8))
            exit(arguments.count >= 2 && arguments[1] == "--list" ? 0 : 2)
        }
        selected = target
        #if BRIDGE_FUZZING
            exit(runLibFuzzer(arguments: [arguments[0]] + arguments.dropFirst(2)))
        #else
            exit(replay(target, paths: Array(arguments.dropFirst(2))))
        #endif
    }

    #if BRIDGE_FUZZING
        /// Hands `arguments` (program name first) to libFuzzer's driver; returns its exit status.
        static func runLibFuzzer(arguments: [String]) -> Int32 {
            // libFuzzer keeps argv for the whole run (and may rewrite it): the copies are never freed.
            var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
            var argc = Int32(arguments.count)
            return argv.withUnsafeMutableBufferPointer { buffer in
                var base = buffer.baseAddress
                return LLVMFuzzerRunDriver(&argc, &base) { data, size in
                    FuzzMain.selected?.run(UnsafeRawBufferPointer(start: data, count: size))
                    return 0
                }
            }
        }
    #endif

    /// Runs every file named by `paths` (directories: every file in them) once; returns the exit status.
    static func replay(_ target: FuzzTarget, paths: [String]) -> Int32 {
        var files: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                FileHandle.standardError.write(Data("bridge-fuzz: no such file: \(path)\n".utf8))
                return 2
            }
            if isDirectory.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                files += names.sorted().map { path + "/" + $0 }
            } else {
                files.append(path)
            }
        }
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else { continue }
            FileHandle.standardError.write(Data("\(target.name): \(file)\n".utf8))
            data.withUnsafeBytes { target.run($0) }
        }
        print("\(target.name): \(files.count) inputs replayed, every invariant held")
        return 0
    }
}
