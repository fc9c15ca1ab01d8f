@testable import BridgeApp
import Testing

/// A `--sink` naming no configured sink (a typo, or a sink removed from bridge.yaml) is said by every `dlq` action
/// that finds nothing: `replay` and `purge` exit 1 with it, and `list` — whose empty answer would otherwise read as "no
/// dead letters for that sink" — says it beside its "0 dead letters".
@Suite struct DeadLetterUnknownSinkTests {
    private let configured = ["search", "hooks", "hooks2"]

    private func command(_ action: DeadLetterCommand.Action, sinks: [String]) -> DeadLetterCommand {
        var command = DeadLetterCommand(action: action, configPath: "bridge.yaml")
        command.sinks = sinks
        return command
    }

    @Test func anEmptyListForAnUnknownSinkSaysTheSinkIsNotConfigured() {
        let note = command(.list, sinks: ["serach"]).unknownSinkNote(count: 0, configured: configured)
        #expect(
            note == "directus-bridge: dlq list: --sink serach is neither a configured sink's id nor a position in "
                + "sinks (0 to 2)")
    }

    @Test func aListOfAKnownSinkOrAPositionOrWithLettersSaysNothingMore() {
        #expect(command(.list, sinks: ["hooks"]).unknownSinkNote(count: 0, configured: configured) == nil)
        #expect(command(.list, sinks: ["2"]).unknownSinkNote(count: 0, configured: configured) == nil)
        // A sink removed from the file may still have letters: listing them is the way to find them.
        #expect(command(.list, sinks: ["old"]).unknownSinkNote(count: 3, configured: configured) == nil)
        #expect(command(.list, sinks: []).unknownSinkNote(count: 0, configured: configured) == nil)
    }

    @Test func replayAndPurgeSayItInTheirNoMatchLine() {
        let message = command(.replay, sinks: ["7"]).nothingMatchedMessage(configured: configured)
        #expect(
            message == "directus-bridge: dlq replay: no dead letter matches --sink 7; --sink 7 is neither a configured "
                + "sink's id nor a position in sinks (0 to 2)")
        #expect(command(.purge, sinks: ["7"]).unknownSinkNote(count: 0, configured: configured) == nil)
    }
}
