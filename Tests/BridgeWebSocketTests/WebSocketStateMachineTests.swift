import Testing

@testable import BridgeWebSocket

private func close(_ code: UInt16, _ reason: String = "") -> ControlFrame {
    ControlFrame(opcode: .close, payload: [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8))
}

@Suite struct WebSocketStateMachineTests {
    @Test func answersPingsWhileOpenOnly() {
        var machine = WebSocketStateMachine()
        #expect(machine.receivedControl(ControlFrame(opcode: .ping, payload: [1, 2])) == .sendPong([1, 2]))
        #expect(machine.receivedControl(ControlFrame(opcode: .pong, payload: [9])) == .none)
        _ = machine.sendClose(code: 1000, reason: "")
        #expect(machine.receivedControl(ControlFrame(opcode: .ping, payload: [])) == .none)
    }

    @Test func echoesThePeersCloseAndReportsIt() {
        var machine = WebSocketStateMachine()
        #expect(machine.receivedControl(close(1001, "bye")) == .sendCloseAndShutdown(code: 1001, reason: ""))
        #expect(machine.state == .closed)
        #expect(machine.peerClose == WebSocketCloseInfo(code: 1001, reason: "bye"))
        #expect(machine.terminalError?.kind == .closed)
        #expect(machine.terminalError?.closeCode == 1001)
        #expect(machine.terminalError?.closeReason == "bye")
        #expect(throws: WebSocketError.self) { try machine.checkCanSend() }
    }

    @Test func aCloseWithoutCodeIsReportedAs1005AndAnsweredEmpty() {
        var machine = WebSocketStateMachine()
        #expect(
            machine.receivedControl(ControlFrame(opcode: .close, payload: []))
                == .sendCloseAndShutdown(code: nil, reason: "")
        )
        #expect(machine.peerClose?.code == 1005)
        #expect(WebSocketStateMachine.closePayload(code: nil, reason: "") == [])
    }

    @Test(
        arguments: [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999]
            as [UInt16]
    )
    func validCloseCodesAreEchoed(code: UInt16) {
        var machine = WebSocketStateMachine()
        #expect(machine.receivedControl(close(code)) == .sendCloseAndShutdown(code: code, reason: ""))
    }

    @Test(arguments: [0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535] as [UInt16])
    func invalidCloseCodesAreProtocolErrors(code: UInt16) {
        var machine = WebSocketStateMachine()
        guard case .sendCloseAndShutdown(let sent, _) = machine.receivedControl(close(code)) else {
            Issue.record("expected a close")
            return
        }
        #expect(sent == 1002)
        #expect(machine.terminalError?.kind == .protocolViolation)
    }

    @Test func aOneByteCloseIs1002AndAnInvalidReasonIs1007() {
        var short = WebSocketStateMachine()
        #expect(
            short.receivedControl(ControlFrame(opcode: .close, payload: [3]))
                == .sendCloseAndShutdown(code: 1002, reason: "close frame with a 1-byte payload")
        )
        var badReason = WebSocketStateMachine()
        guard
            case .sendCloseAndShutdown(let code, _) = badReason.receivedControl(
                ControlFrame(opcode: .close, payload: [0x03, 0xE8, 0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xED, 0xA0, 0x80])
            )
        else {
            Issue.record("expected a close")
            return
        }
        #expect(code == 1007)
    }

    @Test func clientInitiatedCloseWaitsForThePeer() {
        var machine = WebSocketStateMachine()
        #expect(machine.sendClose(code: 1000, reason: "done") == .sendClose(code: 1000, reason: "done"))
        #expect(machine.state == .closeSent)
        #expect(machine.sendClose(code: 1000, reason: "again") == .none)
        #expect(throws: WebSocketError.self) { try machine.checkCanSend() }
        #expect(machine.receivedControl(close(1000, "ok")) == .shutdown)
        #expect(machine.peerClose == WebSocketCloseInfo(code: 1000, reason: "ok"))
    }

    @Test func protocolErrorsCloseWithTheirCode() {
        var open = WebSocketStateMachine()
        #expect(open.receivedProtocolError(.invalidUTF8) == .sendCloseAndShutdown(code: 1007, reason: "invalid UTF-8"))
        #expect(open.terminalError?.closeCode == 1007)
        var tooBig = WebSocketStateMachine()
        _ = tooBig.receivedProtocolError(.messageTooBig(limit: 10))
        #expect(tooBig.terminalError?.kind == .messageTooBig)
        var closing = WebSocketStateMachine()
        _ = closing.sendClose(code: 1000, reason: "")
        #expect(closing.receivedProtocolError(.protocolError("x")) == .shutdown)
    }

    @Test func aDropIs1006() {
        var machine = WebSocketStateMachine()
        #expect(machine.connectionDropped() == .shutdown)
        #expect(machine.peerClose == .abnormal)
        #expect(machine.terminalError?.closeCode == 1006)
        #expect(machine.connectionDropped() == .none)
    }

    @Test func closeReasonsAreCutOnACharacterBoundary() {
        let reason = String(repeating: "é", count: 100)  // 200 bytes
        let payload = WebSocketStateMachine.closePayload(code: 1000, reason: reason)
        #expect(payload.count == 2 + 122)
        #expect(UTF8Validator.isValid(Array(payload[2...])))
    }
}
