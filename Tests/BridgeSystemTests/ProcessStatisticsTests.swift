#if canImport(Glibc)
    import Glibc
#endif
import Testing

@testable import BridgeSystem

/// The /proc parsing behind process_resident_memory_bytes, process_cpu_seconds_total, process_start_time_seconds,
/// process_open_fds and process_max_fds.
@Suite struct ProcessStatisticsTests {
    @Test func residentBytesAreTheSecondStatmFieldInPages() {
        #expect(ProcessStatistics.residentBytes(statm: "54321 1234 567 89 0 4321 0\n", pageSize: 4096) == 5_054_464.0)
    }

    @Test func cpuSecondsCountFieldsFromTheLastParenthesis() {
        // A command name with spaces and parentheses must not shift the fields; utime 250 + stime 50 ticks.
        let stat = "4242 (bad) name (x)) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 9 0 123 456 789\n"
        #expect(ProcessStatistics.cpuSeconds(stat: stat, ticksPerSecond: 100) == 3)
    }

    @Test(arguments: ["", "12", "12 x 3", "12 -5 3"]) func malformedStatmIsNil(text: String) {
        #expect(ProcessStatistics.residentBytes(statm: text, pageSize: 4096) == nil)
    }

    @Test(arguments: ["", "4242 (name S 1 2 3", "4242 (name) S 1 2", "1 (n) S 1 1 1 0 -1 0 0 0 0 0 x 50 0"])
    func malformedStatIsNil(text: String) {
        #expect(ProcessStatistics.cpuSeconds(stat: text, ticksPerSecond: 100) == nil)
    }

    @Test func aZeroPageSizeOrTickRateIsNil() {
        #expect(ProcessStatistics.residentBytes(statm: "1 2 3", pageSize: 0) == nil)
        #expect(ProcessStatistics.cpuSeconds(stat: "1 (n) S 1 1 1 0 -1 0 0 0 0 0 5 5 0", ticksPerSecond: 0) == nil)
    }

    @Test func thisProcessHasPlausibleValues() throws {
        let resident = try #require(ProcessStatistics.residentMemoryBytes())
        #expect(resident > 1_000_000 && resident < 100_000_000_000)
        let cpu = try #require(ProcessStatistics.cpuSeconds())
        #expect(cpu >= 0)
    }

    @Test func startTimeIsBootTimePlusTheStartTicks() throws {
        // Field 22 (starttime) is the 20th after the `)`: 123 here.
        let stat = "4242 (bad) name (x)) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 9 0 123 456 789\n"
        #expect(ProcessStatistics.startTicks(stat: stat) == 123)
        #expect(ProcessStatistics.startTicks(stat: "1 (n) S 1 2") == nil)
        let procStat = "cpu  1 2 3\nintr 5\nbtime 1764892800\nprocesses 9\n"
        #expect(ProcessStatistics.bootTime(procStat: procStat) == 1_764_892_800)
        #expect(ProcessStatistics.bootTime(procStat: "cpu 1\nbtime x\n") == nil)
        let started = try #require(ProcessStatistics.startTimeSeconds())
        let now = Double(Timestamp.now().microsecondsSinceEpoch) / 1e6
        #expect(started <= now + 1 && started > now - 86_400 * 365, "\(started)")
    }

    @Test func openDescriptorsGrowWithAnOpenFileAndStayUnderTheLimit() throws {
        let before = try #require(ProcessStatistics.openFileDescriptors())
        let descriptor = open("/dev/null", O_RDONLY)
        defer { close(descriptor) }
        let during = try #require(ProcessStatistics.openFileDescriptors())
        #expect(during >= before + 1 || during > 0, "\(before) then \(during)")
        let limit = try #require(ProcessStatistics.maxFileDescriptors())
        #expect(limit >= during)
    }
}
