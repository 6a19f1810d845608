// Bad input gets a clear code and close reason, and the server keeps
// serving a healthy client beside it.

import Foundation
import GuildhallClient
import GuildhallLoop
import GuildhallWire
import Testing

@Suite struct BadInputTests {
    /// A healthy client still works after the abuse.
    func stillServes(_ server: TestServer) async throws {
        let (c, _) = try await server.client("healthy", device: UUID().uuidString)
        let g = try await c.servers.create(name: "still here")
        #expect(g.name == "still here")
        c.close()
    }

    @Test func garbageBytesAreRefusedFromTheLengthPrefixAndClosed() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        raw.send(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        let frames = raw.framesUntilClosed()
        #expect(frames.closeReasons == [.frameTooLarge])
        #expect(raw.peerClosed)
        try await stillServes(server)
    }

    @Test func anOversizedPrefixAfterLoginIsRefusedBeforeTheBodyArrives() async throws {
        let server = try TestServer { try $0.set("max-frame-bytes", "2048") }
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        raw.login(server.token("mallory"))
        #expect(raw.nextFrame()?.response.login.userID == "mallory")
        raw.send([0, 0, 0x08, 0x01])  // announces 2049 bytes; no body follows
        let frames = raw.framesUntilClosed()
        #expect(frames.closeReasons == [.frameTooLarge])
        try await stillServes(server)
    }

    /// A client that keeps writing after its bad frame, for longer than the
    /// close would wait for an idle peer, and reads only then, still gets the
    /// close event with its reason: the server reads and discards what it
    /// sends until it stops, so no reset throws the event away (before
    /// login, and after it).
    @Test func aClientStillWritingAfterItsBadFrameGetsItsCloseReason() async throws {
        let server = try TestServer { try $0.set("max-frame-bytes", "2048") }
        defer { server.stop() }
        for loggedIn in [false, true] {
            let raw = try RawConnection(port: server.port)
            if loggedIn {
                raw.login(server.token("mallory"))
                #expect(raw.nextFrame()?.response.login.userID == "mallory")
            }
            // Announces 2049 bytes: over the limit after login; before it, within the
            // login frame's own limit, so the junk completes it as a malformed frame.
            raw.send([0, 0, 0x08, 0x01])
            // Keeps writing junk, without reading, for longer than TCPConnection.lingerMillis.
            let junk = [UInt8](repeating: 0x41, count: 4096)
            let until = Date().addingTimeInterval(Double(TCPConnection.lingerMillis) / 1000 + 1)
            while Date() < until { raw.send(junk) }
            let frames = raw.framesUntilClosed()
            #expect(frames.closeReasons == [loggedIn ? .frameTooLarge : .protocolError], "logged in: \(loggedIn)")
            #expect(raw.peerClosed)
        }
        try await stillServes(server)
    }

    @Test func aFrameExactlyAtTheLimitIsAccepted() async throws {
        let server = try TestServer { try $0.set("max-frame-bytes", "2048") }
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        raw.loginAndSync(server.token("alice"))
        var r = GHRequest()
        r.id = 7
        r.createServer.name = "x"
        var frame = GHFrame()
        frame.request = r
        // Pad with custom data so that the payload is exactly 2048 bytes.
        var pad = 2048 - FrameEncoding.payload(frame).count
        while pad > 0 {
            r.createServer.custom = String(repeating: "c", count: pad)
            frame.request = r
            let over = FrameEncoding.payload(frame).count - 2048
            if over <= 0 { break }
            pad -= over
        }
        #expect(FrameEncoding.payload(frame).count == 2048)
        raw.send(frame)
        let answer = raw.nextFrame()
        #expect(answer?.response.id == 7)
        #expect(answer?.response.server.name == "x")
    }

    @Test func malformedProtobufAfterLoginGets400AndTheSessionLivesOn() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        raw.loginAndSync(server.token("alice"))
        raw.send([0, 0, 0, 3, 0xFF, 0xFF, 0xFF])
        let error = raw.nextFrame()?.response.error
        #expect(error?.code == .badRequest)
        #expect(error?.message.contains("malformed") == true)
        var ping = GHRequest()
        ping.id = 9
        ping.heartbeat = GHHeartbeat()
        raw.send(ping)
        #expect(raw.nextFrame()?.response.id == 9)
    }

    @Test func anUnknownRequestGets400AndTheSessionLivesOn() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        raw.loginAndSync(server.token("alice"))
        // Field 999 of Request: a request kind this server does not know.
        var unknown = GHRequest()
        unknown.id = 5
        var bytes: [UInt8] = try unknown.serializedBytes()
        bytes += [0xBA, 0x3E, 0x00]  // tag (999 << 3 | 2), length 0
        var frameBytes: [UInt8] = [0x0A, UInt8(bytes.count)] + bytes
        var framed: [UInt8] = []
        FrameEncoding.appendLength(UInt32(frameBytes.count), to: &framed)
        framed += frameBytes
        frameBytes = []
        raw.send(framed)
        let answer = raw.nextFrame()
        #expect(answer?.response.id == 5)
        #expect(answer?.response.error.code == .badRequest)
        #expect(answer?.response.error.message.contains("unknown request") == true)
        var ping = GHRequest()
        ping.id = 6
        ping.heartbeat = GHHeartbeat()
        raw.send(ping)
        #expect(raw.nextFrame()?.response.id == 6)
    }

    @Test func aRequestBeforeLoginGets401AndIsClosed() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        var r = GHRequest()
        r.id = 3
        r.listMyServers = GHListMyServers()
        raw.send(r)
        let frames = raw.framesUntilClosed()
        #expect(frames.errors.map(\.code) == [.unauthenticated])
        #expect(frames.closeReasons == [.authFailed])
        // Nothing but the error and the close reached the peer.
        #expect(frames.count == 2)
        try await stillServes(server)
    }

    @Test func loginOrResumeOnALoggedInSessionGets409AndTheSessionLivesOn() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        guard let login = raw.loginAndSync(server.token("alice")) else { Issue.record("login failed"); return }
        raw.login(server.token("bob"), id: 2)
        raw.resume(server.token("alice"), sessionID: login.sessionID, lastEventSeq: 0, id: 3)
        var ping = GHRequest()
        ping.id = 4
        ping.heartbeat = GHHeartbeat()
        raw.send(ping)
        var frames: [GHFrame] = []
        while frames.count < 3, let f = raw.nextFrame() { frames.append(f) }
        #expect(frames.map(\.response.id) == [2, 3, 4])
        #expect(frames.errors.map(\.code) == [.conflict, .conflict])
        #expect(frames.errors.first?.message == "already logged in as alice")
        #expect(frames.last?.response.pong != nil)
    }

    @Test func aBadTokenIsRefused() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let forged = server.token("alice").dropLast(4) + "AAAA"
        let client = GuildhallClient(port: server.port, token: String(forged))
        do {
            try await client.connect()
            Issue.record("a forged token logged in")
        } catch let e as GuildhallError {
            #expect(e.code == .unauthenticated)
            #expect(e.message == "invalid token signature")
        }
        client.close()
        try await stillServes(server)
    }

    @Test func anExpiredTokenIsRefused() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = GuildhallClient(port: server.port, token: server.token("alice", ttl: -10))
        do {
            try await client.connect()
            Issue.record("an expired token logged in")
        } catch let e as GuildhallError {
            #expect(e.code == .unauthenticated)
            #expect(e.message.contains("expired"))
        }
        client.close()
        try await stillServes(server)
    }

    @Test func aConnectionThatNeverLogsInIsClosedAtTheDeadline() async throws {
        let server = try TestServer { try $0.set("login-deadline-ms", "300") }
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        let frames = raw.framesUntilClosed(timeout: 5)
        #expect(frames.closeReasons == [.loginTimeout])
        try await stillServes(server)
    }

    @Test func aSilentSessionIsClosedButAHeartbeatingClientStays() async throws {
        let server = try TestServer {
            try $0.set("idle-timeout-ms", "600")
            try $0.set("heartbeat-interval-ms", "200")
        }
        defer { server.stop() }
        let (sdk, sdkEvents) = try await server.client("alice", device: "sdk")
        let raw = try RawConnection(port: server.port)
        raw.login(server.token("alice", device: "raw"))
        #expect(raw.nextFrame()?.response.login.heartbeatIntervalMs == 200)
        let frames = raw.framesUntilClosed(timeout: 5)
        #expect(frames.closeReasons == [.heartbeatTimeout])
        #expect(sdkEvents.closes.isEmpty)
        #expect(try await sdk.heartbeat() > 0)
    }

    @Test func aFloodOfMalformedConnectionsLeavesTheServerHealthy() async throws {
        let server = try TestServer()
        defer { server.stop() }
        var rng = SystemRandomNumberGenerator()
        for i in 0..<200 {
            let raw = try RawConnection(port: server.port)
            let n = Int.random(in: 1...64, using: &rng)
            var bytes = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if i % 2 == 0 { bytes = [0, 0, 0, UInt8(n)] + bytes }
            raw.send(bytes)
        }
        try await stillServes(server)
    }
}
