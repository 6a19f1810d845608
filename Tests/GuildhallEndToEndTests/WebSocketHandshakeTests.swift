// The WebSocket opening handshake as the server answers it (README "Web client"):
// RFC 6455's own example key, each reason to refuse with its status, the
// origin rule, and the choice of subprotocol.

import GuildhallLoop
import Testing
@testable import GuildhallServer

struct WebSocketHandshakeTests {
    static func request(path: String = "/ws", method: String = "GET", _ headers: [(String, String)] = []) -> HTTPRequest {
        var all: [(name: String, value: String)] = [("Host", "chat.example.com:7402"), ("Upgrade", "websocket"), ("Connection", "keep-alive, Upgrade"),
                                                    ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13"),
                                                    ("Sec-WebSocket-Protocol", "guildhall.proto")]
        for (name, value) in headers {
            all.removeAll { $0.name == name }
            if !value.isEmpty { all.append((name, value)) }
        }
        return HTTPRequest(method: method, target: path, headers: all, body: [])
    }

    static func status(_ o: WebSocketHandshake.Outcome) -> Int {
        switch o {
        case .upgrade: 101
        case .refuse(let status, _): status
        }
    }

    static func text(_ o: WebSocketHandshake.Outcome) -> String {
        switch o {
        case .upgrade(_, let r), .refuse(_, let r): String(decoding: r, as: UTF8.self)
        }
    }

    let sameHost = AllowedOrigins("")

    @Test func theAcceptKeyIsTheRFCsExample() {
        #expect(WebSocketHandshake.accept("dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        let o = WebSocketHandshake.answer(Self.request(), origins: sameHost)
        #expect(o == .upgrade(.proto, response: Array(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Protocol: guildhall.proto\r\n\r\n").utf8)))
    }

    @Test func eachBrokenRequestIsRefusedWithItsStatus() {
        let cases: [(HTTPRequest, Int, String)] = [
            (Self.request(path: "/chat"), 404, "/ws"),
            (Self.request(method: "POST"), 405, "GET"),
            (Self.request([("Upgrade", "")]), 400, "Upgrade"),
            (Self.request([("Connection", "keep-alive")]), 400, "Connection"),
            (Self.request([("Sec-WebSocket-Version", "8")]), 426, "Sec-WebSocket-Version: 13"),
            (Self.request([("Sec-WebSocket-Key", "")]), 400, "16 bytes"),
            (Self.request([("Sec-WebSocket-Key", "c2hvcnQ=")]), 400, "16 bytes"),
            (Self.request([("Sec-WebSocket-Key", "not base64 at all!!")]), 400, "16 bytes"),
            (Self.request([("Sec-WebSocket-Protocol", "")]), 400, "subprotocol"),
            (Self.request([("Sec-WebSocket-Protocol", "chat, superchat")]), 400, "subprotocol"),
            (Self.request([("Origin", "https://evil.example.net")]), 403, "origin"),
        ]
        for (r, status, says) in cases {
            let o = WebSocketHandshake.answer(r, origins: sameHost)
            #expect(Self.status(o) == status, "\(r.method) \(r.target) \(r.headers)")
            #expect(Self.text(o).contains(says) && Self.text(o).contains("Connection: close"), "\(Self.text(o))")
        }
    }

    @Test func theFirstSubprotocolOfferedThatGuildhallSpeaksIsChosen() {
        let json = WebSocketHandshake.answer(Self.request([("Sec-WebSocket-Protocol", "chat, guildhall.json, guildhall.proto")]), origins: sameHost)
        guard case .upgrade(.json, _) = json else { Issue.record("\(json)"); return }
        #expect(Self.text(json).contains("Sec-WebSocket-Protocol: guildhall.json\r\n"))
    }

    @Test func originsArePagesOfThisHostByDefaultOrThoseListed() {
        #expect(sameHost.allows(origin: nil, host: "chat.example.com"), "no Origin: not a browser")
        #expect(sameHost.allows(origin: "https://chat.example.com:7402", host: "chat.example.com:7402"))
        #expect(sameHost.allows(origin: "http://CHAT.example.com:7402", host: "chat.example.com:7402"))
        #expect(!sameHost.allows(origin: "https://chat.example.com", host: "chat.example.com:7402"), "another port is another origin")
        let listed = AllowedOrigins(" https://app.example.com/ , http://localhost:3000")
        #expect(listed.allows(origin: "https://app.example.com", host: "ws.example.com"))
        #expect(listed.allows(origin: "http://localhost:3000", host: "ws.example.com"))
        #expect(!listed.allows(origin: "https://ws.example.com", host: "ws.example.com"), "a list replaces the same-host rule")
        #expect(AllowedOrigins("*").allows(origin: "https://anywhere.example", host: "ws.example.com"))
    }
}
