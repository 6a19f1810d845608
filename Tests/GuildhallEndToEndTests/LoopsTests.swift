// Many loops in one server (docs/architecture.md): with `loops` = 2 the kernel
// spreads connections over both loops' listeners, a session lives on the
// loop that accepted it, its home reaches it only by messages, and a resume
// that lands on the other loop is handed to the session's own. These tests
// run with two loops whatever GUILDHALL_LOOPS says (the rest of the suite
// runs in both modes through it).

import Foundation
@testable import GuildhallClient
import GuildhallWire
import Testing

@Suite struct LoopsTests {
    /// The loop a session lives on: the low byte of the key in its id ("node-key-random").
    static func loop(ofSession id: String) -> UInt64? {
        let parts = id.split(separator: "-")
        return parts.count == 3 ? UInt64(parts[1]).map { $0 & 0xff } : nil
    }

    @Test func sessionsSpreadOverTheLoopsAndEachGetsEveryMessageOnceInOrder() async throws {
        let server = try TestServer {
            $0.loops = 2
        }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let s = try await alice.servers.create(name: "Many loops")
        let c = try await alice.channels.create(in: s.serverID, name: "general")
        var readers: [(RawConnection, String)] = []
        for i in 0..<16 {
            let raw = try RawConnection(port: server.port)
            guard let login = raw.loginAndSync(server.token("reader\(i)")) else { Issue.record("reader\(i) did not log in"); return }
            readers.append((raw, login.sessionID))
            let (member, _) = try await server.client("reader\(i)", device: "joining")
            _ = try await member.servers.join(s.serverID)
            member.close()
        }
        let loops = Set(readers.compactMap { Self.loop(ofSession: $0.1) })
        #expect(loops == [0, 1], "16 connections all landed on one loop")
        var sent: [UInt64] = []
        for i in 0..<30 { sent.append(try await alice.messages.send("m\(i)", to: c.channelID).uid) }
        for (raw, id) in readers {
            var got: [UInt64] = []
            while got.count < sent.count, let f = raw.nextFrame() {
                if case .message(let m)? = f.event.body { got.append(m.uid) }
            }
            #expect(got == sent, "session \(id) on loop \(Self.loop(ofSession: id) ?? 99)")
        }
    }

    /// A burst of messages reaches each gateway as a run, which goes out
    /// recipient by recipient (FanoutRun.swift): a notice the home sends
    /// between two messages of the burst must still come between them, for
    /// every reader on either loop, in a small server (every online member)
    /// and a large one (subscribers). A message with a file, whose links each
    /// reader gets its own of, keeps its place in the burst too.
    @Test(arguments: [true, false]) func aNoticeInABurstOfMessagesComesBetweenThemOnEveryLoop(small: Bool) async throws {
        let server = try TestServer {
            $0.loops = 2
            $0.wsListen = "127.0.0.1:0"
            if !small { try $0.set("small-server-threshold", "2") }
        }
        defer { server.stop() }
        server.update { $0.filesURL = "http://127.0.0.1:\(server.webSocketPort)" }
        let (alice, _) = try await server.client("alice")
        let s = try await alice.servers.create(name: "Bursts")
        let c = try await alice.channels.create(in: s.serverID, name: "general")
        let file = try await FileMessagesTests().upload(Array("the minutes".utf8), as: "minutes.txt", type: "text/plain", by: alice,
                                                        to: .channel(c.channelID))
        var readers: [(RawConnection, String, user: String)] = []
        // The kernel spreads connections over the loops by a hash: more readers come until both loops hold some.
        for i in 0..<40 where readers.count < 12 || Set(readers.compactMap { Self.loop(ofSession: $0.1) }).count < 2 {
            let (member, _) = try await server.client("reader\(i)", device: "joining")
            _ = try await member.servers.join(s.serverID)
            member.close()
            let raw = try RawConnection(port: server.port)
            guard let login = raw.loginAndSync(server.token("reader\(i)")) else { Issue.record("reader\(i) did not log in"); return }
            if !small, raw.subscribeToMessages(server: s.serverID, channel: c.channelID, id: 2) != .targetOk {
                Issue.record("reader\(i) did not subscribe")
                return
            }
            readers.append((raw, login.sessionID, "reader\(i)"))
        }
        #expect(Set(readers.compactMap { Self.loop(ofSession: $0.1) }) == [0, 1], "\(readers.count) connections all landed on one loop")
        // One write: 30 sends, the channel renamed, 30 more (one with the file); the home takes them in order.
        let writer = try RawConnection(port: server.port)
        guard writer.loginAndSync(server.token("alice", device: "burst")) != nil else { Issue.record("the writer did not log in"); return }
        var burst: [UInt8] = []
        for i in 0..<61 {
            var r = GHRequest()
            r.id = 100 + UInt64(i)
            if i == 30 {
                r.updateChannel.channelID = c.channelID
                r.updateChannel.name = "renamed"
            } else {
                r.sendMessage.channelID = c.channelID
                r.sendMessage.body.text = "m\(i)"
                if i == 45 { r.sendMessage.attachments = [file] }
            }
            var f = GHFrame()
            f.request = r
            burst += FrameEncoding.framed(f)
        }
        writer.send(burst)
        // The home's order is the messages' seqs: the one with the file waits for
        // its upload's check, so later sends may overtake it; the notice comes
        // where the home took it, after m29 (nothing before it waits).
        var seqs: [String: UInt64] = [:]
        while seqs.count < 60, let f = writer.nextFrame() {
            if case .message(let m)? = f.response.result { seqs[m.body.text] = m.seq }
        }
        #expect(seqs.count == 60, "the writer's answers")
        var expected = seqs.sorted { $0.value < $1.value }.map { $0.key == "m45" ? "m45+link" : $0.key }
        expected.insert("renamed", at: (expected.firstIndex(of: "m29") ?? 0) + 1)
        for (raw, id, user) in readers {
            var got: [String] = []
            while got.count < expected.count, let f = raw.nextFrame() {
                switch f.event.body {
                case .message(let m)?:
                    let link = m.attachments.first.map { $0.fileID == file && $0.url.contains("?u=\(user)&") ? "+link" : "+a wrong link" }
                    got.append(m.body.text + (link ?? ""))
                case .notification(let n)? where n.kind == .channelUpdated: got.append(n.channel.name)
                default: break
                }
            }
            #expect(got == expected, "session \(id) on loop \(Self.loop(ofSession: id) ?? 99)")
        }
    }

    /// Twelve drops and resumes of one session: about half land on the
    /// other loop and must be handed over; every one replays exactly what was missed.
    @Test func aResumeThatLandsOnTheOtherLoopTakesTheSessionOverThere() async throws {
        let server = try TestServer {
            $0.loops = 2
            try $0.set("small-server-threshold", "100")
        }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        _ = try await bobEvents.notification(.memberJoined)
        bob.close()
        var raw = try RawConnection(port: server.port)
        guard let login = raw.loginAndSync(server.token("bob")) else { Issue.record("login failed"); return }
        // A message not yet on the session's loop when the resume arrives
        // follows the resume live: count what bob receives, not what each replay holds.
        var sent: [UInt64] = [], received: [UInt64] = []
        var lastSeq = raw.lastEventSeq
        for round in 0..<12 {
            raw.cut()
            for i in 0..<2 { sent.append(try await alice.messages.send("round \(round) \(i)", to: c.channelID).uid) }
            raw = try RawConnection(port: server.port)
            raw.resume(server.token("bob"), sessionID: login.sessionID, lastEventSeq: lastSeq)
            let answer = raw.nextFrame()?.response.login
            #expect(answer?.resumed == true, "round \(round): \(answer?.resumeFailure ?? "no answer")")
            while received.count < sent.count, let f = raw.nextFrame() {
                lastSeq = f.event.seq
                if case .message(let m)? = f.event.body { received.append(m.uid) }
            }
        }
        #expect(received == sent, "every message once, in order, across twelve resumes")
    }

    /// Shutdown with sessions on both loops: the other loop closes its
    /// sessions first, each with its reason, then the home's; nothing is left open.
    @Test func shutdownTellsEverySessionOnEveryLoopWhyItEnds() async throws {
        let server = try TestServer { $0.loops = 2 }
        var sessions: [(RawConnection, String)] = []
        // The kernel spreads connections over the loops by a hash: ten may all land on one
        // (seen in CI, 1 in 512), so more come until both loops hold some.
        for i in 0..<40 where sessions.count < 10 || Set(sessions.compactMap { Self.loop(ofSession: $0.1) }).count < 2 {
            let raw = try RawConnection(port: server.port)
            guard let login = raw.loginAndSync(server.token("user\(i)")) else { Issue.record("user\(i) did not log in"); return }
            sessions.append((raw, login.sessionID))
        }
        #expect(Set(sessions.compactMap { Self.loop(ofSession: $0.1) }) == [0, 1], "\(sessions.count) connections all landed on one loop")
        let rc = server.stop()
        #expect(rc == 0, "a loop leaked a handle")
        for (raw, id) in sessions {
            #expect(raw.framesUntilClosed().closeReasons == [.shuttingDown], "session \(id)")
        }
    }
}
