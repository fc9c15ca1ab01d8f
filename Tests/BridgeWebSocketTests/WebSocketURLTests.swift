import BridgeWebSocket
import Testing

@Suite struct WebSocketURLTests {
    @Test func defaultsPortAndPath() throws {
        let url = try WebSocketURL("ws://example.com")
        #expect(url.isSecure == false)
        #expect(url.host == "example.com")
        #expect(url.port == 80)
        #expect(url.path == "/")
        #expect(url.query == nil)
        #expect(url.requestTarget == "/")
        #expect(url.hostHeader == "example.com")
        #expect(try WebSocketURL("WSS://example.com").port == 443)
    }

    @Test func keepsPathQueryAndPortAndHidesTheQueryInDescriptions() throws {
        let url = try WebSocketURL("wss://cms.example.com:8443/cms/websocket?access_token=secret")
        #expect(url.port == 8443)
        #expect(url.path == "/cms/websocket")
        #expect(url.query == "access_token=secret")
        #expect(url.requestTarget == "/cms/websocket?access_token=secret")
        #expect(url.hostHeader == "cms.example.com:8443")
        #expect(url.description == "wss://cms.example.com:8443")  // README.md, "How URLs are shown"
        #expect(try WebSocketURL("ws://h?x=1").requestTarget == "/?x=1")
    }

    @Test func parsesIPv6Literals() throws {
        let url = try WebSocketURL("ws://[::1]:9000/x")
        #expect(url.host == "::1")
        #expect(url.isIPv6Literal)
        #expect(url.hostHeader == "[::1]:9000")
        #expect(try WebSocketURL("wss://[2001:db8::1]/").hostHeader == "[2001:db8::1]")
        #expect(try WebSocketURL("ws://127.0.0.1:8055/websocket").host == "127.0.0.1")
    }

    @Test(arguments: [
        ("http://example.com", "scheme"), ("example.com", "ws://"), ("ws://", "missing host"),
        ("ws://host:abc", "port"), ("ws://host:0", "port"), ("ws://host:70000", "port"), ("ws://host:", "port"),
        ("ws://[::1", "unclosed"), ("ws://[nothex]/", "IPv6"), ("ws://host/#frag", "fragment"),
        ("ws://user@host", "user info"), ("ws://ho st/", "spaces"), ("ws://h%41st/", "host"),
    ])
    func refusesBadURLsWithAReason(text: String, reason: String) {
        #expect {
            try WebSocketURL(text)
        } throws: { error in
            guard let error = error as? WebSocketError else { return false }
            return error.kind == .invalidURL && !error.isRetriable && error.message.contains(reason)
        }
    }
}
