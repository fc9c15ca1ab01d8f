import Testing

@testable import BridgeWebSocket

/// The pure part of a tunnel through the configured proxy: the `CONNECT` request and the reading of the proxy's
/// answer, a peer's text read with bounds (issue 23, "Proxies").
@Suite struct ProxyTunnelTests {
    private func text(_ tunnel: ProxyTunnel) -> String { String(decoding: tunnel.request, as: UTF8.self) }

    @Test func requestNamesTheOriginAndCarriesBasicCredentials() {
        let plain = ProxyTunnel(host: "directus.example.com", port: 443, basicCredentials: nil)
        #expect(text(plain) == "CONNECT directus.example.com:443 HTTP/1.1\r\nHost: directus.example.com:443\r\n\r\n")

        let withUser = ProxyTunnel(host: "::1", port: 8055, basicCredentials: "Aladdin:open sesame")
        #expect(
            text(withUser)
                == "CONNECT [::1]:8055 HTTP/1.1\r\nHost: [::1]:8055\r\n"
                + "Proxy-Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==\r\n\r\n")
    }

    @Test func twoHundredOpensTheTunnelWhateverTheChunks() {
        let answer = Array("HTTP/1.1 200 Connection established\r\nVia: 1.1 proxy\r\n\r\n".utf8)
        var whole = ProxyTunnel(host: "h", port: 1, basicCredentials: nil)
        #expect(whole.received(answer) == .established)

        var byteByByte = ProxyTunnel(host: "h", port: 1, basicCredentials: nil)
        for byte in answer.dropLast() { #expect(byteByByte.received([byte]) == .needMore) }
        #expect(byteByByte.received([answer.last!]) == .established)

        var bareLineFeeds = ProxyTunnel(host: "h", port: 1, basicCredentials: nil)
        #expect(bareLineFeeds.received(Array("HTTP/1.0 200\n\n".utf8)) == .established)
    }

    @Test func interimAnswersAreSkipped() {
        var tunnel = ProxyTunnel(host: "h", port: 1, basicCredentials: nil)
        #expect(tunnel.received(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) == .needMore)
        #expect(tunnel.received(Array("HTTP/1.1 204 OK\r\n\r\n".utf8)) == .established)
    }

    @Test func anotherStatusRefusesWithTheProxysReason() {
        var denied = ProxyTunnel(host: "h", port: 1, basicCredentials: nil)
        let answer = "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"x\"\r\n\r\nbody"
        #expect(denied.received(Array(answer.utf8)) == .refused(status: 407, reason: "Proxy Authentication Required"))

        var forbidden = ProxyTunnel(host: "h", port: 1, basicCredentials: nil)
        #expect(forbidden.received(Array("HTTP/1.1 403\r\n\r\n".utf8)) == .refused(status: 403, reason: ""))

        var long = ProxyTunnel(host: "h", port: 1, basicCredentials: nil)
        let reason = String(repeating: "r", count: 5000)
        #expect(long.received(Array("HTTP/1.1 502 \(reason)\r\n\r\n".utf8)) == .refused(status: 502, reason: String(reason.prefix(200))))
    }

    @Test(arguments: [
        "SSH-2.0-OpenSSH_9.2\r\n", "HTTP/2 200\r\n", "HTTP/1.1 20x OK\r\n", "HTTP/1.1 099 Low\r\n",
        "HTTP/1.1 600 High\r\n", "HTTP/1.1 2000 OK\r\n", "HTTP/1.1 200OK\r\n", "\r\n",
    ])
    func aStatusLineThatIsNotHTTPIsInvalid(answer: String) {
        var tunnel = ProxyTunnel(host: "h", port: 1, basicCredentials: nil)
        guard case .invalid = tunnel.received(Array(answer.utf8)) else {
            Issue.record("accepted \(answer.debugDescription)")
            return
        }
        #expect(tunnel.received(Array("HTTP/1.1 200 OK\r\n\r\n".utf8)) != .established, "read on after the end")
    }

    @Test func bytesAfterTheTwoHundredAreRefused() {
        var tunnel = ProxyTunnel(host: "h", port: 1, basicCredentials: nil)
        let step = tunnel.received(Array("HTTP/1.1 200 OK\r\n\r\n\u{16}\u{03}\u{01}".utf8))
        #expect(step == .invalid("the proxy sent 3 bytes after its answer, before the origin spoke"))
    }

    /// An endless header, one huge line, or endless short lines: the answer ends at its bounds, wherever they fall
    /// in a chunk, and nothing fed after that is kept.
    @Test func hostileAnswersEndAtTheBounds() {
        let headerLine = Array("X-Filler: \(String(repeating: "a", count: 1000))\r\n".utf8)
        var endlessHeader = ProxyTunnel(host: "h", port: 1, basicCredentials: nil)
        var fed = 0
        var step = endlessHeader.received(Array("HTTP/1.1 200 OK\r\n".utf8))
        while step == .needMore, fed < 1 << 20 {
            step = endlessHeader.received(headerLine)
            fed += headerLine.count
        }
        #expect(step == .invalid("the answer's head is longer than \(ProxyTunnel.maxAnswerBytes) bytes"))
        #expect(fed <= ProxyTunnel.maxAnswerBytes + headerLine.count)

        var hugeLine = ProxyTunnel(host: "h", port: 1, basicCredentials: nil)
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 4096)
        fed = 0
        step = hugeLine.received(Array("HTTP/1.1 200 ".utf8))
        while step == .needMore, fed < 1 << 20 {
            step = hugeLine.received(chunk)
            fed += chunk.count
        }
        #expect(step == .invalid("the answer's head is longer than \(ProxyTunnel.maxAnswerBytes) bytes"))
        #expect(fed <= ProxyTunnel.maxAnswerBytes + chunk.count)
        #expect(hugeLine.received(chunk) == .invalid("answer read after it ended"))

        var manyLines = ProxyTunnel(host: "h", port: 1, basicCredentials: nil)
        let lines = Array("HTTP/1.1 200 OK\r\n".utf8) + Array(repeating: Array("A: b\r\n".utf8), count: 200).joined()
        #expect(manyLines.received(lines) == .invalid("the answer's head has more than \(ProxyTunnel.maxLines) lines"))
    }
}
