// The WebSocket listener end to end (README "Web client"), with a bare WebSocket
// peer written here: the handshake over the wire (accepted, refused), and a
// WebSocket client and a TCP client chatting in one channel, each hearing
// each message once. (The web tests' independent peer, Python's `websockets`, and
// the browser tests come with the web client.)

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

/// A WebSocket client speaking `guildhall.proto` (binary) or `guildhall.json` (text) over a bare socket.
final class WebSocketPeer {
    let raw: RawConnection
    let json: Bool
    private var buffer: [UInt8] = []
    private(set) var closeCode: UInt16?

    init(port: Int, json: Bool = false) throws {
        raw = try RawConnection(port: port)
        self.json = json
    }

    init(raw: RawConnection, json: Bool = false) {
        self.raw = raw
        self.json = json
    }

    /// Sends the opening handshake; returns the response's head.
    func handshake(protocols: String? = nil, origin: String? = nil, key: String = "dGhlIHNhbXBsZSBub25jZQ==", before: [UInt8] = [],
                   headers: [String] = []) -> String {
        let protocols = protocols ?? (json ? "guildhall.json" : "guildhall.proto")
        var request = "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: \(protocols)\r\n"
        if let origin { request += "Origin: \(origin)\r\n" }
        for header in headers { request += header + "\r\n" }
        raw.send(before + Array((request + "\r\n").utf8))
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if let end = buffer.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: buffer[..<end.upperBound], as: UTF8.self)
                buffer.removeFirst(end.upperBound)
                return head
            }
            buffer += raw.receive(timeout: 0.1)
        }
        return String(decoding: buffer, as: UTF8.self)
    }

    /// Sends a login with `token` (request id 1) and returns its answer.
    func login(_ token: String) -> GHLoginResult? {
        var login = GHRequest()
        login.id = 1
        login.login.token = token
        send(login)
        return nextFrame()?.response.login
    }

    func send(_ request: GHRequest) {
        var f = GHFrame()
        f.request = request
        if json { return raw.send(WebSocketFrames.clientFrame(0x1, JSONFrames.text(f))) }
        raw.send(WebSocketFrames.clientFrame(0x2, (try? f.serializedBytes()) ?? []))
    }

    /// The next `Frame` the server sent (nil after a close frame, or at the deadline).
    func nextFrame(timeout: Double = 5) -> GHFrame? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if buffer.count >= 2 {
                var length = Int(buffer[1] & 0x7F), header = 2
                if length == 126, buffer.count >= 4 { length = Int(buffer[2]) << 8 | Int(buffer[3]); header = 4 }
                if length == 127, buffer.count >= 10 { length = buffer[2..<10].reduce(0) { $0 << 8 | Int($1) }; header = 10 }
                if buffer.count >= header + length, length < 126 || header > 2 {
                    let opcode = buffer[0] & 0x0F
                    let payload = Array(buffer[header..<(header + length)])
                    buffer.removeFirst(header + length)
                    if opcode == 0x8 {
                        closeCode = payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : 0
                        return nil
                    }
                    if opcode == 0x2, !json { return try? GHFrame(serializedBytes: payload) }
                    if opcode == 0x1, json { return try? GHFrame(jsonUTF8Bytes: payload) }
                    #expect(opcode == 0x9 || opcode == 0xA, "a \(json ? "text" : "binary") session gets opcode \(opcode)")
                    continue
                }
            }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return nil }
            buffer += raw.receive(timeout: left)
        }
    }

    /// The next event that is a channel message, skipping others.
    func nextMessage(timeout: Double = 5) -> GHChannelMessage? { nextMessageEvent(timeout: timeout)?.message }

    /// The next channel message event, with its seq and unread info.
    func nextMessageEvent(timeout: Double = 5) -> GHEvent? {
        let deadline = Date().addingTimeInterval(timeout)
        while let f = nextFrame(timeout: max(0, deadline.timeIntervalSinceNow)) {
            if case .message? = f.event.body { return f.event }
        }
        return nil
    }
}

@Suite struct WebSocketTests {
    static func server() throws -> TestServer { try TestServer { $0.wsListen = "127.0.0.1:0" } }

    @Test func theHandshakeIsAnsweredOverTheWire() throws {
        let server = try Self.server()
        defer { server.stop() }
        let ok = try WebSocketPeer(port: server.webSocketPort).handshake()
        #expect(ok.hasPrefix("HTTP/1.1 101 ") && ok.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n")
                && ok.contains("Sec-WebSocket-Protocol: guildhall.proto\r\n"), "\(ok)")
        let json = try WebSocketPeer(port: server.webSocketPort, json: true).handshake(protocols: "chat, guildhall.json")
        #expect(json.hasPrefix("HTTP/1.1 101 ") && json.contains("Sec-WebSocket-Protocol: guildhall.json\r\n"), "\(json)")
        let origin = try WebSocketPeer(port: server.webSocketPort).handshake(origin: "https://elsewhere.example")
        #expect(origin.hasPrefix("HTTP/1.1 403 "), "\(origin)")
        let none = try WebSocketPeer(port: server.webSocketPort).handshake(protocols: "chat")
        #expect(none.hasPrefix("HTTP/1.1 400 "), "\(none)")
        let key = try WebSocketPeer(port: server.webSocketPort).handshake(key: "c2hvcnQ=")
        #expect(key.hasPrefix("HTTP/1.1 400 "), "\(key)")
    }

    @Test(arguments: [false, true])
    func aWebSocketClientAndATCPClientChatInOneChannel(json: Bool) async throws {
        let server = try Self.server()
        defer { server.stop() }
        let (alice, aliceHeard) = try await server.client("alice")
        let g = try await alice.servers.create(name: "Mixed")
        let channel = try await alice.channels.create(in: g.serverID, name: "general")

        let bob = try WebSocketPeer(port: server.webSocketPort, json: json)
        #expect(bob.handshake().hasPrefix("HTTP/1.1 101 "))
        #expect(bob.login(server.token("bob"))?.userID == "bob")
        var join = GHRequest()
        join.id = 2
        join.joinServer.serverID = g.serverID
        bob.send(join)
        while let f = bob.nextFrame(), f.response.id != 2 {}

        let fromTCP = try await alice.messages.send("hello over TCP", to: channel.channelID)
        let event = try #require(bob.nextMessageEvent(), "bob hears alice over WebSocket")
        let heard = event.message
        #expect(heard.uid == fromTCP.uid && heard.body.text == "hello over TCP")
        // The recipient's own part (seq, unread numbers) arrives with the shared message in either encoding;
        // JSON carries the channel in its unread info, binary leaves it to the message.
        #expect(event.seq > 0 && event.messageUnread?.channelID == channel.channelID && event.unread.unreadCount == 1, "\(event)")
        #expect(event.unread.channelID == (json ? channel.channelID : 0))

        var send = GHRequest()
        send.id = 3
        send.sendMessage.channelID = channel.channelID
        send.sendMessage.body.text = "hello over WebSocket"
        bob.send(send)
        var acked: GHChannelMessage?
        while acked == nil, let f = bob.nextFrame() {
            if f.response.id == 3, case .message(let m)? = f.response.result { acked = m }
        }
        let mine = try #require(acked)
        _ = try await aliceHeard.message("alice hears bob over TCP") { $0.uid == mine.uid }
        #expect(aliceHeard.messages.filter { $0.uid == mine.uid }.count == 1)
        #expect(bob.nextMessage(timeout: 0.3) == nil, "bob hears nothing twice, and not his own message")

        // A close carries its reason twice: the `closed` event, then a WebSocket close of 4000 + the reason.
        var logout = GHRequest()
        logout.id = 4
        logout.logout = GHLogout()
        bob.send(logout)
        var reasons: [GHCloseReason] = []
        while let f = bob.nextFrame() { if case .closed(let c)? = f.event.body { reasons.append(c.reason) } }
        #expect(reasons.count == 1)
        #expect(bob.closeCode == reasons.first.map(WebSocketFrameSink.closeCode), "close code \(String(describing: bob.closeCode))")
    }

    @Test func webSocketSessionsAreSpreadOverTheLoops() throws {
        guard testLoops > 1 else { return }
        let server = try Self.server()
        defer { server.stop() }
        var loops = Set<UInt64>()
        var peers: [WebSocketPeer] = []
        for i in 0..<16 {
            let peer = try WebSocketPeer(port: server.webSocketPort, json: true)
            peers.append(peer)
            #expect(peer.handshake().hasPrefix("HTTP/1.1 101 "))
            let answer = try #require(peer.login(server.token("user\(i)")))
            // A session id is "node-key-random"; the key's low byte names the loop.
            let key = try #require(UInt64(answer.sessionID.split(separator: "-")[1]))
            loops.insert(key & 0xff)
        }
        #expect(loops.count == testLoops, "sessions on loops \(loops.sorted())")
    }
}
