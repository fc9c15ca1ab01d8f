import Testing

@testable import BridgeSystem

/// The /proc parsing behind process_resident_memory_bytes and process_cpu_seconds_total.
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
}
