// Clients' real addresses behind a load balancer (docs/security.md): a PROXY
// header (v1 or v2) from a trusted proxy, or X-Forwarded-For on a WebSocket
// upgrade through one, names the client, and the failed-login limiter
// counts that address, not the balancer's. From any other peer a PROXY
// header is refused.

import Foundation
import GuildhallCore
import GuildhallLoop
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct ProxyProtocolTests {
    /// A server behind 127.0.0.1 (the test's connections come from there); 127.0.0.2 is any other peer.
    /// One failed login per user, so ten per address (RequestLimits' address factor), then 429 for a minute.
    func server(_ tweak: (inout Settings) throws -> Void = { _ in }) throws -> TestServer {
        try TestServer {
            $0.trustedProxies = "127.0.0.1/32"
            $0.wsListen = "127.0.0.1:0"
            try $0.set("login-failures-burst", "1")
            try $0.set("login-failure-interval-ms", "60000")
            try tweak(&$0)
        }
    }

    static func v1(_ client: String, _ port: Int = 50_000) -> [UInt8] { Array("PROXY TCP4 \(client) 127.0.0.1 \(port) 7400\r\n".utf8) }

    static func v2(_ client: [UInt8], _ port: Int = 50_001) -> [UInt8] {
        [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A] + [0x21, 0x11, 0, 12] + client + [127, 0, 0, 1, UInt8(port >> 8), UInt8(port & 0xFF), 0x1C, 0xE8]
    }

    /// A token that fails: signed with another secret, for a user of its own (so only the address's budget is spent).
    static func forged(_ user: String) -> String {
        AccessToken(user: user, device: "d", expiry: UInt64(Date().timeIntervalSince1970) + 600).signed(with: Array("not the secret".utf8))
    }

    /// Logs in over TCP with `header` before the first frame; the error code, if any, and the close reasons.
    func login(_ server: TestServer, header: [UInt8], token: String, from source: String? = nil) throws -> (GHErrorCode?, [GHCloseReason]) {
        let raw = try RawConnection(port: server.port, from: source)
        var request = GHRequest()
        request.id = 1
        request.login.token = token
        var frame = GHFrame()
        frame.request = request
        raw.send(header + FrameEncoding.framed(frame))
        guard let answer = raw.nextFrame(timeout: 5) else { return (nil, []) }
        if case .login? = answer.response.result { return (nil, []) }
        let rest = raw.framesUntilClosed(timeout: 5)
        return (([answer] + rest).errors.first?.code, ([answer] + rest).closeReasons)
    }

    /// A browser's login: the error it was answered, nil when it logged in.
    static func loginError(_ browser: WebSocketPeer, _ token: String) -> GHErrorCode? {
        var request = GHRequest()
        request.id = 1
        request.login.token = token
        browser.send(request)
        guard case .error(let e)? = browser.nextFrame()?.response.result else { return nil }
        return e.code
    }

    @Test func aTrustedProxysHeaderNamesTheClientTheLimiterCounts() throws {
        let server = try server()
        defer { server.stop() }
        for i in 0..<10 {
            #expect(try login(server, header: Self.v1("203.0.113.9", 40_000 + i), token: Self.forged("guess-\(i)")).0 == .unauthenticated)
        }
        // 203.0.113.9 spent its budget: even a good token from there waits.
        #expect(try login(server, header: Self.v1("203.0.113.9"), token: server.token("alice")).0 == .rateLimited)
        // Another client through the same balancer, by either version, and the balancer itself, are not held back.
        #expect(try login(server, header: Self.v1("203.0.113.10"), token: server.token("bob")) == (nil, []))
        #expect(try login(server, header: Self.v2([203, 0, 113, 11]), token: server.token("carol")) == (nil, []))
        #expect(try login(server, header: [], token: server.token("dave")) == (nil, []))
        #expect(try login(server, header: Array("PROXY UNKNOWN\r\n".utf8), token: server.token("erin")) == (nil, []))
    }

    @Test func aPROXYHeaderFromAnyoneElseOrBrokenIsRefused() throws {
        let server = try server()
        defer { server.stop() }
        let untrusted = try login(server, header: Self.v1("203.0.113.9"), token: server.token("alice"), from: "127.0.0.2")
        #expect(untrusted.1 == [.protocolError], "\(untrusted)")
        let broken = try login(server, header: Array("PROXY TCP4 203.0.113.9 127.0.0.1 99999 7400\r\n".utf8), token: server.token("alice"))
        #expect(broken.1 == [.protocolError], "\(broken)")
        // Without a header, the untrusted peer is served as always.
        #expect(try login(server, header: [], token: server.token("alice"), from: "127.0.0.2") == (nil, []))
        // Nothing is trusted by default.
        let plain = try TestServer()
        defer { plain.stop() }
        #expect(try login(plain, header: Self.v1("203.0.113.9"), token: plain.token("alice")).1 == [.protocolError])
    }

    /// A browser behind an HTTP proxy: X-Forwarded-For names it, from a trusted proxy only; a PROXY header before the upgrade too.
    @Test func theWebSocketUpgradeTakesTheClientFromATrustedProxy() throws {
        let server = try server()
        defer { server.stop() }
        for i in 0..<10 {
            let browser = try WebSocketPeer(port: server.webSocketPort)
            #expect(browser.handshake(headers: ["X-Forwarded-For: 198.51.100.4, 127.0.0.1"]).hasPrefix("HTTP/1.1 101 "))
            #expect(Self.loginError(browser, Self.forged("ws-guess-\(i)")) == .unauthenticated)
        }
        // The failures were 198.51.100.4's: a TCP login that a trusted proxy says comes from there waits too.
        #expect(try login(server, header: Self.v1("198.51.100.4"), token: server.token("alice")).0 == .rateLimited)
        let proxied = try WebSocketPeer(port: server.webSocketPort)
        #expect(proxied.handshake(before: Self.v1("198.51.100.4")).hasPrefix("HTTP/1.1 101 "))
        #expect(Self.loginError(proxied, server.token("bob")) == .rateLimited, "the PROXY header's client is the same address: held back too")
        // From a peer that is not trusted, X-Forwarded-For is ignored and a PROXY header refused.
        let stranger = WebSocketPeer(raw: try RawConnection(port: server.webSocketPort, from: "127.0.0.2"))
        #expect(stranger.handshake(headers: ["X-Forwarded-For: 198.51.100.4"]).hasPrefix("HTTP/1.1 101 "))
        #expect(stranger.login(server.token("carol"))?.userID == "carol")
        let refused = WebSocketPeer(raw: try RawConnection(port: server.webSocketPort, from: "127.0.0.2"))
        #expect(refused.handshake(before: Self.v1("198.51.100.4")).hasPrefix("HTTP/1.1 400 "))
    }
}
