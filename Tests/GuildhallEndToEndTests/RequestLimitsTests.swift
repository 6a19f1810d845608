// Abuse limits (docs/protocol.md, docs/reliability.md: R4, A6, B3), each limit
// exactly reached, then one over: requests per session by rate class,
// failed logins per user and per address, the connection cap, and frames
// that never complete.

import Foundation
import GuildhallBuild
import GuildhallClient
import GuildhallServer
import GuildhallWire
import Testing

@Suite struct RequestLimitsTests {
    func send(_ c: RawConnection, _ text: String, to channel: UInt64, id: UInt64) {
        var r = GHRequest()
        r.id = id
        r.sendMessage.channelID = channel
        r.sendMessage.body.text = text
        c.send(r)
    }

    /// 1 message a second, so a burst of 2: the third send of a quick
    /// pipeline is refused with the time to wait; other classes keep their
    /// own budgets; a session that goes on being refused is closed.
    @Test func aSessionOverItsMessageRateGets429ThenIsClosedWhenItPersists() async throws {
        let server = try TestServer {
            $0.rateMessages = 1
            $0.rateStrikes = 3
        }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (g, c) = try await guild(server, owner: alice, members: [])
        let raw = try RawConnection(port: server.port)
        #expect(raw.loginAndSync(server.token("alice", device: "raw")) != nil)
        for id in 1...3 { send(raw, "hi", to: c.channelID, id: UInt64(id)) }
        var r = GHRequest()
        r.id = 4
        r.getServers.serverIds = [g.serverID]
        raw.send(r)
        var answers: [UInt64: GHResponse] = [:]
        while answers.count < 4, let f = raw.nextFrame() { if case .response(let a)? = f.kind { answers[a.id] = a } }
        #expect(answers[1]?.message.uid != 0 && answers[2]?.message.uid != 0, "the burst")
        let refused = answers[3]?.error
        #expect(refused?.code == .rateLimited)
        #expect((1...1000).contains(refused?.retryAfterMs ?? 0), "the wait for one more at 1/s")
        #expect(answers[4]?.servers.servers.count == 1, "reads have a budget of their own")

        for id in 5...8 { send(raw, "again", to: c.channelID, id: UInt64(id)) }
        let rest = raw.framesUntilClosed()
        #expect(rest.errors.map(\.code) == [.rateLimited, .rateLimited], "refusals 2 and 3 (the first was above)")
        #expect(rest.closeReasons == [.closedRateLimited])
        #expect(try await alice.messages.history(of: c.channelID).messages.count == 2, "nothing refused was stored")
    }

    /// The login answer tells the limits the session is held to and the server's version.
    @Test func theLoginTellsTheLimitsAndTheServersVersion() async throws {
        let server = try TestServer {
            $0.rateMessages = 3
            $0.maxBodyBytes = 5_000
            $0.syncPackageSize = 50
        }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let login = try await alice.connect()
        #expect(login.serverVersion == GuildhallBuild.BuildInfo.version && login.serverCommit == GuildhallBuild.BuildInfo.commit)
        let limits = login.limits
        #expect(limits.rateMessages == 3 && limits.maxBodyBytes == 5_000 && limits.syncPackageSize == 50)
        #expect(limits.maxFrameBytes == UInt32(server.settings.maxFrameBytes) && limits.rateQueries == UInt32(server.settings.rateQueries)
                && limits.rateSession == UInt32(server.settings.rateSession) && limits.rateChanges == UInt32(server.settings.rateChanges)
                && limits.rateTyping == UInt32(server.settings.rateTyping) && limits.maxMentions == UInt32(server.settings.maxMentions))
        // Held to exactly what it was told: a body at the limit is stored, one byte more is refused.
        let (_, c) = try await guild(server, owner: alice, members: [])
        _ = try await alice.messages.send(String(repeating: "a", count: Int(limits.maxBodyBytes)), to: c.channelID)
        await expectError(.tooLarge) { _ = try await alice.messages.send(String(repeating: "a", count: Int(limits.maxBodyBytes) + 1), to: c.channelID) }

        let raw = try RawConnection(port: server.port)
        var r = GHRequest()
        r.login.token = server.token("alice", device: "raw")
        raw.send(r)
        #expect(raw.nextFrame()?.response.login.limits.rateMessages == 3)
    }

    func loginAnswer(_ server: TestServer, _ token: String, from source: String = "127.0.0.1") throws -> (GHErrorCode?, UInt32, [GHCloseReason]) {
        let raw = try RawConnection(port: server.port, from: source)
        raw.login(token)
        let frames = raw.framesUntilClosed(timeout: 3)
        let error = frames.errors.first
        return (error?.code, error?.retryAfterMs ?? 0, frames.closeReasons)
    }

    /// Three failures for a user, then one a minute: the fourth is refused
    /// without a check, and other users still log in; an address gets ten
    /// times a user's budget, and another address is not held back.
    @Test func failedLoginsAreLimitedPerUserAndPerAddress() async throws {
        let server = try TestServer {
            $0.loginFailuresBurst = 3
            $0.loginFailureIntervalMs = 60_000
        }
        defer { server.stop() }
        let forged = server.token("mallory").dropLast(4) + "AAAA"
        for _ in 0..<3 {
            let (code, _, closes) = try loginAnswer(server, String(forged))
            #expect(code == .unauthenticated && closes == [.authFailed])
        }
        let (code, retry, closes) = try loginAnswer(server, String(forged))
        #expect(code == .rateLimited && closes == [.closedRateLimited])
        #expect(retry > 0 && retry <= 60_000)
        let (alice, _) = try await server.client("alice")
        #expect(try await alice.heartbeat() > 0, "another user logs in from the same address")

        // The address: 30 failures, each for a user of its own; the 31st is refused, from another address it is checked.
        for n in 0..<29 {
            let (code, _, _) = try loginAnswer(server, String(server.token("user\(n)").dropLast(4) + "AAAA"), from: "127.0.0.3")
            #expect(code == .unauthenticated, "failure \(n + 1) of the address is checked")
        }
        #expect(try loginAnswer(server, String(server.token("user29").dropLast(4) + "AAAA"), from: "127.0.0.3").0 == .unauthenticated)
        #expect(try loginAnswer(server, String(server.token("user30").dropLast(4) + "AAAA"), from: "127.0.0.3").0 == .rateLimited)
        #expect(try loginAnswer(server, String(server.token("user31").dropLast(4) + "AAAA"), from: "127.0.0.4").0 == .unauthenticated)
    }

    /// R4 in small: with room for 3 connections, a 4th gets SERVER_FULL and
    /// is closed at once; once one leaves, a new one is accepted.
    @Test func pastMaxConnectionsANewConnectionGetsServerFullAndIsClosed() async throws {
        let server = try TestServer { $0.maxConnections = 3 }
        defer { server.stop() }
        let held = try (0..<3).map { _ in try RawConnection(port: server.port) }
        for (n, c) in held.enumerated() { #expect(c.loginAndSync(server.token("u\(n)")) != nil) }
        let refused = try RawConnection(port: server.port)
        let frames = refused.framesUntilClosed(timeout: 3)
        #expect(frames.closeReasons == [.serverFull])
        #expect(refused.peerClosed)
        held[0].cut()
        _ = try await waitFor("room for one more") {
            let next = try RawConnection(port: server.port)
            return next.loginAndSync(server.token("late")) != nil ? true : nil
        }
    }

    /// B3: a frame trickled a byte at a time is not a sign of life and is
    /// cut at the frame deadline; bytes alone do not keep a session from its idle timeout.
    @Test func aFrameThatNeverCompletesIsCutAtTheFrameDeadline() async throws {
        let server = try TestServer {
            $0.frameDeadlineMs = 400
            $0.idleTimeoutMs = 60_000
        }
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        #expect(raw.loginAndSync(server.token("slow")) != nil)
        raw.send([0, 0, 0, 50])  // a length prefix for 50 bytes that never come in full
        let start = Date()
        var closes: [GHCloseReason] = []
        while !raw.peerClosed, Date().timeIntervalSince(start) < 10 {
            raw.send([1])
            closes += raw.framesUntilClosed(timeout: 0.1).closeReasons
        }
        #expect(closes == [.frameTimeout])
    }

    @Test func bytesThatNeverMakeAFrameDoNotKeepASessionAlive() async throws {
        let server = try TestServer {
            $0.frameDeadlineMs = 600_000
            $0.idleTimeoutMs = 500
        }
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        #expect(raw.loginAndSync(server.token("trickle")) != nil)
        raw.send([0, 0, 0, 200])
        let start = Date()
        var closes: [GHCloseReason] = []
        while !raw.peerClosed, Date().timeIntervalSince(start) < 10 {
            raw.send([1])
            closes += raw.framesUntilClosed(timeout: 0.1).closeReasons
        }
        #expect(closes == [.heartbeatTimeout])
    }

    /// docs/reliability.md L1: closed within two missed heartbeats and a second: the
    /// timeout is two heartbeats, and the sweep that finds it runs at least twice a second.
    @Test func theDefaultIdleTimeoutIsTwoHeartbeats() {
        let s = Settings()
        #expect(s.idleTimeoutMs == 2 * s.heartbeatIntervalMs)
    }
}
