// Offline sync in packages and resume without gaps (docs/protocol.md),
// one test per rule, through the SDK or, where the test must control exactly
// when a connection drops or stops reading, through a raw connection.

import Foundation
import GuildhallCore
@testable import GuildhallClient
@testable import GuildhallServer
import GuildhallWire
import Testing

@Suite struct SyncConformanceTests {
    /// alice owns a server that bob joined; bob's joining session has
    /// acknowledged everything and logged out, so bob's device is in step.
    private func setUp(_ server: TestServer) async throws -> (GuildhallClient, UInt64, UInt64) {
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (s, c) = try await guild(server, owner: alice, members: [bob])
        _ = try await bobEvents.notification(.memberJoined)
        bob.close()
        return (alice, s.serverID, c.channelID)
    }

    /// bob, subscribed to `channel`, got a message and then lost his
    /// connection; his SDK's reconnects wait (in their token) until `gate` is opened.
    private func droppedSubscriber(_ server: TestServer, _ alice: GuildhallClient, _ serverID: UInt64,
                                   _ channel: UInt64) async throws -> (GuildhallClient, Recorder, Gate) {
        let gate = Gate()
        let tokens = Locked(0)
        let token = server.token("bob")
        let bob = GuildhallClient(port: server.port, options: ClientOptions(token: {
            if tokens.withLock({ $0 += 1; return $0 }) > 1 { gate.wait(seconds: 20) }
            return token
        }))
        let events = Recorder()
        bob.addListener(events)
        try await bob.connect()
        #expect(try await bob.sub(.channelMsg, serverID, [channel]) == [.targetOk])
        let before = try await alice.messages.send("before", to: channel)
        _ = try await events.message { $0.uid == before.uid }
        bob.simulateNetworkDrop()
        return (bob, events, gate)
    }

    /// Sends `n` messages, 50 in flight at a time; returns their UIDs in channel order.
    /// `blob`: custom bodies of that many bytes instead of text (the debug
    /// build validates large text slowly).
    private func send(_ alice: GuildhallClient, _ n: Int, to channel: UInt64, blob blobBytes: Int = 0,
                      mentioning user: String? = nil, inFlight: Int = 50) async throws -> [UInt64] {
        var sent: [GHChannelMessage] = []
        for start in stride(from: 0, to: n, by: inFlight) {
            sent += try await withThrowingTaskGroup(of: GHChannelMessage.self) { group in
                for i in start..<min(n, start + inFlight) {
                    group.addTask {
                        if blobBytes > 0 { return try await alice.messages.send(blob(blobBytes, byte: UInt8(i % 256)), to: channel) }
                        return try await alice.messages.send("hey \(i)", to: channel, mentions: user.map { [$0] } ?? [])
                    }
                }
                var out: [GHChannelMessage] = []
                for try await m in group { out.append(m) }
                return out
            }
        }
        return sent.sorted { $0.seq < $1.seq }.map(\.uid)
    }

    private func sendMentions(_ alice: GuildhallClient, _ n: Int, to channel: UInt64, mentioning user: String) async throws -> [UInt64] {
        try await send(alice, n, to: channel, mentioning: user)
    }

    @Test func aThousandOfflineItemsArriveAsFivePackagesThenCompleted() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _, channel) = try await setUp(server)
        let sent = try await sendMentions(alice, 1000, to: channel, mentioning: "bob")
        let (_, bob) = try await server.client("bob")
        _ = try await waitFor("sync completed") { bob.syncCompletions == 1 ? true : nil }
        let shapes = bob.shapes.withLock { $0 }
        #expect(shapes.count == 1000)
        #expect(Set(shapes.map(\.uid)) == Set(sent))
        for (i, shape) in shapes.enumerated() {
            let package = i / 200
            #expect(shape.offline)
            #expect(shape.left == 199 - i % 200, "item \(i)")
            #expect(shape.hasPackage == (package < 4), "item \(i)")
        }
        // "Completed" comes after the last item, and only once.
        let order = bob.events.withLock { $0 }
        let lastMessage = order.lastIndex { if case .message = $0 { true } else { false } }
        let completed = order.firstIndex { if case .syncCompleted = $0 { true } else { false } }
        #expect(lastMessage! < completed!)
    }

    @Test func withNothingOfflineSyncCompletesAtOnce() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (_, events) = try await server.client("carol")
        _ = try await waitFor("sync completed") { events.syncCompletions == 1 ? true : nil }
        let first = events.events.withLock { $0.first { if case .status = $0 { false } else { true } } }
        guard case .syncCompleted? = first else {
            Issue.record("the first event was \(String(describing: first)), not sync completed")
            return
        }
    }

    @Test func aDeviceThatSyncedGetsOnlyWhatCameAfter() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _, channel) = try await setUp(server)
        _ = try await sendMentions(alice, 3, to: channel, mentioning: "bob")
        let (first, firstEvents) = try await server.client("bob")
        _ = try await waitFor("sync completed") { firstEvents.syncCompletions == 1 ? true : nil }
        #expect(firstEvents.shapes.withLock { $0.count } == 3)
        first.close()
        let later = try await sendMentions(alice, 2, to: channel, mentioning: "bob")
        let (_, second) = try await server.client("bob")
        _ = try await waitFor("sync completed") { second.syncCompletions == 1 ? true : nil }
        #expect(second.shapes.withLock { $0.map(\.uid) } == later)
    }

    @Test func noLiveEventReachesTheSessionBeforeSyncCompleted() async throws {
        let server = try TestServer { try $0.set("sync-package-size", "10") }
        defer { server.stop() }
        let (alice, _, channel) = try await setUp(server)
        _ = try await sendMentions(alice, 25, to: channel, mentioning: "bob")
        let raw = try RawConnection(port: server.port)
        raw.login(server.token("bob"))
        #expect(raw.nextFrame()?.response.login.userID == "bob")
        var offline = 0
        var firstPackageEnd: UInt64 = 0
        while offline < 10, let f = raw.nextFrame() {
            if f.event.offline { offline += 1 }
            if f.event.offline && f.event.left == 0 { firstPackageEnd = f.event.seq }
        }
        // The first package is not acknowledged yet: a live message must wait.
        let live = try await alice.messages.send("live while bob syncs", to: channel)
        var ping = GHRequest()
        ping.id = 5
        ping.heartbeat = GHHeartbeat()
        raw.send(ping)
        while let f = raw.nextFrame(), f.response.id != 5 {
            #expect(f.event.message.uid != live.uid, "a live message came before sync completed")
        }
        raw.ack(firstPackageEnd)
        var frames: [GHFrame] = []
        var acked = firstPackageEnd
        while let f = raw.nextFrame(timeout: 5) {
            frames.append(f)
            if f.event.offline && f.event.left == 0 && f.event.seq > acked {
                acked = f.event.seq
                raw.ack(acked)
            }
            if f.event.message.uid == live.uid { break }
        }
        let completed = frames.firstIndex { if case .syncCompleted? = $0.event.body { true } else { false } }
        let liveAt = frames.firstIndex { $0.event.message.uid == live.uid }
        #expect(frames.filter(\.event.offline).count == 15)
        guard let completed, let liveAt else { Issue.record("no completed or no live message"); return }
        #expect(completed < liveAt)
        #expect(!frames[liveAt].event.offline)
    }

    @Test func aClientThatNeverAcknowledgesItsSyncCannotMakeTheServerHoldLiveEventsForever() async throws {
        let server = try TestServer {
            try $0.set("sync-package-size", "10")
            try $0.set("resume-events", "5")
        }
        defer { server.stop() }
        let (alice, _, channel) = try await setUp(server)
        _ = try await sendMentions(alice, 12, to: channel, mentioning: "bob")
        let raw = try RawConnection(port: server.port)
        raw.login(server.token("bob"))
        #expect(raw.nextFrame()?.response.login.userID == "bob")
        // bob reads the first package and never acknowledges it; live messages pile up behind the sync.
        for i in 0..<8 { _ = try await alice.messages.send("live \(i)", to: channel) }
        let frames = raw.framesUntilClosed(timeout: 10)
        #expect(raw.peerClosed, "the session was not ended")
        let live = frames.filter { f in
            if case .message? = f.event.body { return !f.event.offline }
            return false
        }
        #expect(live.isEmpty, "no live event before sync completed")
    }

    @Test func droppingTheSocketMidSyncAtRandomPointsLosesAndDoublesNothing() async throws {
        let server = try TestServer { try $0.set("sync-package-size", "20") }
        defer { server.stop() }
        let (alice, _, channel) = try await setUp(server)
        let sent = try await sendMentions(alice, 150, to: channel, mentioning: "bob")
        var rng = SeededRandom(seed: 0x5EED)
        var received: [UInt64] = []  // message UIDs as an SDK would deliver them (cursor de-duplication)
        var highestCursor: UInt64 = 0
        var ackedCursor: UInt64 = 0
        var attempts = 0
        var done = false
        while !done && attempts < 40 {
            attempts += 1
            let raw = try RawConnection(port: server.port)
            raw.login(server.token("bob"))
            guard raw.nextFrame()?.response.login.userID == "bob" else { Issue.record("login failed"); return }
            let cutAfter = Int.random(in: 1...45, using: &rng)
            var seen = 0
            var lastCursorOfPackage: UInt64 = 0
            while let f = raw.nextFrame(timeout: 5) {
                if case .syncCompleted? = f.event.body { done = true; break }
                guard f.event.offline else { continue }
                // The server starts again right after the last acknowledged package.
                if seen == 0 { #expect(f.event.cursor > ackedCursor, "attempt \(attempts) repeated an acknowledged package") }
                seen += 1
                if f.event.cursor > highestCursor {
                    highestCursor = f.event.cursor
                    received.append(f.event.message.uid)
                }
                lastCursorOfPackage = f.event.cursor
                if f.event.left == 0 {
                    // Without an acknowledgement the server waits: cut here.
                    guard Bool.random(using: &rng) else { break }
                    raw.ack(f.event.seq)
                    ackedCursor = lastCursorOfPackage
                    // Wait for the answer so the acknowledgement surely counted before a cut.
                    while let a = raw.nextFrame(), a.response.id != 99 { if a.event.offline, a.event.cursor > highestCursor { highestCursor = a.event.cursor; received.append(a.event.message.uid) } }
                }
                if seen >= cutAfter { break }
            }
            raw.cut()
        }
        #expect(done, "sync never completed in \(attempts) attempts")
        #expect(received == sent, "gaps or duplicates: \(received.count) delivered of \(sent.count)")
    }

    @Test func aSessionDroppedMidSyncResumesAndFinishesTheSync() async throws {
        let server = try TestServer { try $0.set("sync-package-size", "10") }
        defer { server.stop() }
        let (alice, _, channel) = try await setUp(server)
        let sent = try await sendMentions(alice, 25, to: channel, mentioning: "bob")
        let raw = try RawConnection(port: server.port)
        raw.login(server.token("bob"))
        guard let login = raw.nextFrame()?.response.login else { Issue.record("login failed"); return }
        var got: [UInt64] = []
        var lastSeq: UInt64 = 0
        while got.count < 4, let f = raw.nextFrame() {
            if f.event.offline { got.append(f.event.message.uid); lastSeq = f.event.seq }
        }
        raw.cut()
        let again = try RawConnection(port: server.port)
        again.resume(server.token("bob"), sessionID: login.sessionID, lastEventSeq: lastSeq)
        #expect(again.nextFrame()?.response.login.resumed == true)
        var completed = false
        while let f = again.nextFrame() {
            if case .syncCompleted? = f.event.body { completed = true; break }
            guard f.event.offline else { continue }
            got.append(f.event.message.uid)
            if f.event.left == 0 { again.ack(f.event.seq) }
        }
        #expect(completed)
        #expect(got == sent, "the rest of the first package was replayed, then the sync went on")
    }

    @Test func acknowledgedEventsAreForgottenAndALoggedOutSessionCannotBeResumed() async throws {
        let server = try TestServer { try $0.set("small-server-threshold", "100") }
        defer { server.stop() }
        let (alice, _, channel) = try await setUp(server)
        let raw = try RawConnection(port: server.port)
        guard let login = raw.loginAndSync(server.token("bob")) else { Issue.record("login failed"); return }
        for i in 0..<3 { _ = try await alice.messages.send("m\(i)", to: channel) }
        var last: UInt64 = 0
        while last < 4, let f = raw.nextFrame() { last = max(last, f.event.seq) }
        // A heartbeat can carry the acknowledgement: events up to 4 are forgotten.
        var beat = GHRequest()
        beat.id = 7
        beat.heartbeat.lastEventSeq = last
        raw.send(beat)
        var answered = false
        while let f = raw.nextFrame() { if case .response(let r)? = f.kind, r.id == 7 { answered = true; break } }
        #expect(answered, "the heartbeat is answered (after any event already on its way)")
        raw.cut()
        let early = try RawConnection(port: server.port)
        early.resume(server.token("bob"), sessionID: login.sessionID, lastEventSeq: 2)
        let answer = early.nextFrame()?.response.login
        #expect(answer?.resumed == false, "events 3 and 4 were acknowledged, so a resume from 2 cannot be exact")
        // The fallback session logs out: it ends at once and cannot be resumed.
        var logout = GHRequest()
        logout.id = 8
        logout.logout = GHLogout()
        early.send(logout)
        let frames = early.framesUntilClosed(timeout: 5)
        #expect(frames.closeReasons == [.loggedOut])
        let after = try RawConnection(port: server.port)
        after.resume(server.token("bob"), sessionID: answer?.sessionID ?? "", lastEventSeq: 0)
        #expect(after.nextFrame()?.response.login.resumed == false)
    }

    @Test func aResumeReplaysExactlyWhatWasMissedInOrder() async throws {
        let server = try TestServer { try $0.set("small-server-threshold", "100") }
        defer { server.stop() }
        let (alice, _, channel) = try await setUp(server)
        let raw = try RawConnection(port: server.port)
        raw.skipsPresence = false
        guard let login = raw.loginAndSync(server.token("bob")) else { Issue.record("login failed"); return }
        // bob hears alice online first (a fellow member of a small server): that event is numbered too.
        var heard = false
        while !heard, let f = raw.nextFrame() { if case .presence? = f.event.body { heard = true } }
        #expect(heard, "alice's presence at login")
        let before = try await alice.messages.send("seen", to: channel)
        guard let seen = raw.nextFrame(), seen.event.message.uid == before.uid else { Issue.record("first message missing"); return }
        raw.cut()
        var missed: [UInt64] = []
        for i in 0..<5 { missed.append(try await alice.messages.send("missed \(i)", to: channel).uid) }
        let again = try RawConnection(port: server.port)
        again.resume(server.token("bob"), sessionID: login.sessionID, lastEventSeq: seen.event.seq)
        let answer = again.nextFrame()?.response.login
        #expect(answer?.resumed == true)
        // With homes on other loops, the last sends' events may still be on
        // their way to bob's gateway when the resume arrives: they follow
        // `resumed` as live events, in the same numbering, so nothing is missed either way.
        var replayed: [GHFrame] = []
        var resumedCount: UInt32?
        while replayed.count < 5, let f = again.nextFrame() {
            if case .resumed(let r)? = f.event.body {
                resumedCount = r.replayed
                continue
            }
            replayed.append(f)
        }
        if resumedCount == nil, let f = again.nextFrame(), case .resumed(let r)? = f.event.body { resumedCount = r.replayed }
        #expect(resumedCount != nil && resumedCount! <= 5 && (testLoops > 1 || resumedCount == 5))
        #expect(replayed.map(\.event.message.uid) == missed)
        #expect(replayed.map(\.event.seq) == Array((seen.event.seq + 1)...(seen.event.seq + 5)))
        // Live again, on the same session.
        let after = try await alice.messages.send("live", to: channel)
        #expect(again.nextFrame()?.event.message.uid == after.uid)
    }

    @Test func theSDKResumesByItselfAndKeepsItsSubscriptions() async throws {
        // A large server: bob receives only because of his subscription.
        let server = try TestServer { try $0.set("small-server-threshold", "1") }
        defer { server.stop() }
        let (alice, _, channel) = try await setUp(server)
        let (bob, events) = try await server.client("bob")
        let serverID = try await alice.servers.mine()[0].serverID
        let statuses = try await bob.sub(.channelMsg, serverID, [channel])
        #expect(statuses == [.targetOk])
        _ = try await alice.messages.send("before", to: channel)
        _ = try await events.message { $0.body.text == "before" }
        bob.simulateNetworkDrop()
        var sent: [UInt64] = []
        for i in 0..<10 { sent.append(try await alice.messages.send("during \(i)", to: channel).uid) }
        _ = try await waitFor("a resume") { events.resumes.isEmpty ? nil : true }
        let after = try await alice.messages.send("after", to: channel)
        _ = try await events.message { $0.uid == after.uid }
        let uids = events.messages.map(\.uid)
        #expect(uids.filter { sent.contains($0) } == sent, "each missed message once, in order")
        #expect(Set(uids).count == uids.count)
        #expect(events.syncCompletions == 1, "a resume is not a new login")
    }

    /// docs/reliability.md: a resume too late for the replay buffer falls back to a
    /// login whose sync carries only what is addressed to the user; the
    /// answer names the channel messages missed, and the SDK fetches them
    /// from history before the channel's live messages: plain channel messages
    /// (no mention) reach the listener each once, in order.
    @Test func aResumeTooLateStillBringsEveryChannelMessageThroughTheSDK() async throws {
        // A large server: bob receives only because of his subscription.
        let server = try TestServer {
            try $0.set("small-server-threshold", "1")
            try $0.set("resume-events", "5")
        }
        defer { server.stop() }
        let (alice, serverID, channel) = try await setUp(server)
        // bob's reconnect waits (in its token) until he has missed more than his replay buffer holds.
        let (bob, events, gate) = try await droppedSubscriber(server, alice, serverID, channel)
        defer { bob.close() }
        var sent: [UInt64] = []
        for i in 0..<12 { sent.append(try await alice.messages.send("during \(i)", to: channel).uid) }
        gate.open()
        _ = try await waitFor("bob logged in afresh", timeout: 30) { events.syncCompletions >= 2 ? true : nil }
        // Live again once the SDK has subscribed again.
        var after: GHChannelMessage?
        for _ in 0..<20 where after == nil {
            let m = try await alice.messages.send("after", to: channel)
            if (try? await events.message(timeout: 1) { $0.uid == m.uid }) != nil { after = m }
        }
        #expect(after != nil, "live again")
        let uids = events.messages.map(\.uid)
        #expect(uids.filter { sent.contains($0) } == sent, "each missed message once, in order: \(uids.filter { sent.contains($0) }.count) of \(sent.count)")
        #expect(Set(uids).count == uids.count, "nothing twice")
        if let after, let last = uids.firstIndex(of: sent.last!), let live = uids.firstIndex(of: after.uid) { #expect(last < live) }
    }

    /// The answer of a resume too late for the replay buffer names, on the
    /// wire, exactly the range of the channel's messages it was sent and
    /// could not replay: those the buffer let go and those it still holds.
    @Test func aResumeTooLateNamesExactlyTheMessagesItCouldNotReplay() async throws {
        let server = try TestServer {
            try $0.set("small-server-threshold", "1")
            try $0.set("resume-events", "5")
        }
        defer { server.stop() }
        let (alice, serverID, channel) = try await setUp(server)
        let bob = try RawConnection(port: server.port)
        let login = try #require(bob.loginAndSync(server.token("bob")))
        #expect(bob.subscribeToMessages(server: serverID, channel: channel, id: 3) == .targetOk)
        let from = bob.lastEventSeq
        var seqs: [UInt64] = []
        for i in 0..<12 { seqs.append(try await alice.messages.send("unacknowledged \(i)", to: channel).seq) }
        // bob reads all twelve and acknowledges none, then drops.
        var heard = 0
        while heard < 12, let f = bob.nextFrame() { if case .message? = f.event.body { heard += 1 } }
        #expect(heard == 12)
        bob.cut()
        let again = try RawConnection(port: server.port)
        again.resume(server.token("bob"), sessionID: login.sessionID, lastEventSeq: from)
        let answer = try #require(again.nextFrame()?.response.login)
        #expect(!answer.resumed, "seven of the twelve are gone from a buffer of five")
        var gap = GHChannelGap()
        gap.serverID = serverID
        gap.channelID = channel
        gap.firstSeq = seqs.first!
        gap.lastSeq = seqs.last!
        #expect(answer.missed == [gap])
    }

    /// A resume after the server restarted (it holds no session any more):
    /// the client says up to which seq it got each channel, and the login it
    /// falls back to names every channel with newer messages; the SDK fetches
    /// them before the channel's live messages, each once, in order.
    @Test func aResumeAfterARestartNamesTheMissedChannelsAndTheSDKFetchesThem() async throws {
        // A large server: bob receives only because of his subscription.
        let server = try TestServer { try $0.set("small-server-threshold", "1") }
        defer { server.stop() }
        let (alice, serverID, channel) = try await setUp(server)
        // bob's reconnect waits (in its token) until the server restarted and more was sent.
        let (bob, events, gate) = try await droppedSubscriber(server, alice, serverID, channel)
        defer { bob.close() }
        alice.close()
        try server.restart()
        let (again, _) = try await server.client("alice", device: "after-restart")
        var sent: [UInt64] = []
        for i in 0..<30 { sent.append(try await again.messages.send("while restarted \(i)", to: channel).uid) }
        gate.open()
        _ = try await waitFor("bob logged in afresh", timeout: 30) { events.syncCompletions >= 2 ? true : nil }
        var after: GHChannelMessage?
        for _ in 0..<20 where after == nil {
            let m = try await again.messages.send("after", to: channel)
            if (try? await events.message(timeout: 1) { $0.uid == m.uid }) != nil { after = m }
        }
        #expect(after != nil, "live again")
        let uids = events.messages.map(\.uid)
        #expect(uids.filter { sent.contains($0) } == sent, "each missed message once, in order: \(uids.filter { sent.contains($0) }.count) of \(sent.count)")
        #expect(Set(uids).count == uids.count, "nothing twice")
    }

    @Test func overflowingTheReplayBufferFallsBackToSyncWithNothingLost() async throws {
        let server = try TestServer { try $0.set("resume-events", "5") }
        defer { server.stop() }
        let (alice, _, channel) = try await setUp(server)
        let raw = try RawConnection(port: server.port)
        guard let login = raw.loginAndSync(server.token("bob")) else { Issue.record("login failed"); return }
        raw.cut()
        let sent = try await sendMentions(alice, 12, to: channel, mentioning: "bob")
        let again = try RawConnection(port: server.port)
        again.resume(server.token("bob"), sessionID: login.sessionID, lastEventSeq: 1)
        let answer = again.nextFrame()?.response.login
        #expect(answer?.resumed == false)
        #expect(answer?.resumeFailure.contains("no longer held") == true)
        #expect(answer?.sessionID != login.sessionID)
        var offline: [UInt64] = []
        while let f = again.nextFrame() {
            if case .syncCompleted? = f.event.body { break }
            if f.event.offline {
                offline.append(f.event.message.uid)
                if f.event.left == 0 { again.ack(f.event.seq) }
            }
        }
        #expect(offline == sent)
    }

    @Test func aSlowConsumerIsClosedAtTheCapAndResumesWhileAHealthySessionKeepsReceiving() async throws {
        let server = try TestServer {
            try $0.set("small-server-threshold", "100")
            // bob reads nothing, and with small kernel buffers his backlog waits in his
            // queue, past the cap. alice and carol read, but a loaded machine may leave
            // a burst of 50 answers or events (400 KB) unread for a while: a 64 KiB cap once cut alice.
            try $0.set("socket-send-buffer-bytes", "16384")
            try $0.set("outbound-hard-cap-bytes", "1048576")
            // Only the cap may cut anyone here: under the full suite's load alice's 300 sends
            // took long enough that a session was closed by another rule (CI, "connection
            // closed by the server"), as in the backpressure test below.
            try $0.set("heartbeat-interval-ms", "600000")
            try $0.set("write-stall-ms", "600000")
        }
        defer { server.stop() }
        let (alice, _, channel) = try await setUp(server)
        let aliceHeard = Recorder()
        alice.addListener(aliceHeard)
        let (carol, carolEvents) = try await server.client("carol")
        _ = try await carol.servers.join(try await alice.servers.mine()[0].serverID)
        let slow = try RawConnection(port: server.port, receiveBuffer: 4096)
        guard let login = slow.loginAndSync(server.token("bob")) else { Issue.record("login failed"); return }
        // bob stops reading; alice sends more than the kernel buffers and the cap hold. Ten at a
        // time, so what alice has yet to read (her answers and her own messages' events, 16 KB a
        // send) stays far under the cap her session has too, however late her reader runs. A
        // failure says what alice's and carol's connections went through.
        let sent: [UInt64]
        do {
            sent = try await send(alice, 300, to: channel, blob: 8_000, inFlight: 10)
            // The healthy session got everything.
            _ = try await waitFor("carol to receive all", timeout: 20) { carolEvents.messages.count >= sent.count ? true : nil }
        } catch {
            Issue.record("\(error); alice: \(aliceHeard.connectionStory); carol: \(carolEvents.connectionStory)")
            throw error
        }
        #expect(Set(carolEvents.messages.map(\.uid)) == Set(sent))
        // bob's connection was cut; resuming replays everything after the last event he read.
        let frames = slow.framesUntilClosed(timeout: 10)
        #expect(slow.peerClosed, "the slow consumer was not closed")
        let lastSeq = frames.map(\.event.seq).max() ?? 1
        let again = try RawConnection(port: server.port)
        again.resume(server.token("bob"), sessionID: login.sessionID, lastEventSeq: lastSeq)
        let answer = again.nextFrame()?.response.login
        #expect(answer?.resumed == true)
        #expect(answer?.previousCloseReason == .slowConsumer, "the reason the reset connection could not carry")
        var replayed = frames.compactMap { f -> UInt64? in if case .message(let m)? = f.event.body { m.uid } else { nil } }
        while let f = again.nextFrame(timeout: 10) {
            if case .resumed? = f.event.body { break }
            if case .message(let m)? = f.event.body { replayed.append(m.uid) }
        }
        #expect(replayed.count == sent.count, "\(frames.count) frames before the cut, last seq \(lastSeq), \(replayed.count) of \(sent.count) in all")
        #expect(replayed == sent)
    }
}

/// A custom body of `count` bytes: bytes, so the debug build does not spend its time validating UTF-8.
func blob(_ count: Int, byte: UInt8) -> GHMessageBody {
    var b = GHMessageBody()
    b.custom.type = "blob"
    b.custom.data = Data(repeating: byte, count: count)
    return b
}

@Suite struct BackpressureConformanceTests {
    @Test func aSessionBehindOnItsWritesShedsTypingAndCollapsesUnreadButKeepsEveryMessage() async throws {
        let server = try TestServer {
            try $0.set("outbound-shed-bytes", "16384")
            try $0.set("typing-throttle-ms", "0")
            try $0.set("small-server-threshold", "1")
            try $0.set("outbound-hard-cap-bytes", "67108864")
            try $0.set("outbound-soft-cap-bytes", "67108864")
            // bob sends nothing while alice's 400 sends fill his queue; on a loaded machine that took
            // over a minute in CI, past the heartbeat deadline, and his session was closed.
            try $0.set("heartbeat-interval-ms", "600000")
            // Nor is he cut as a slow consumer (no write completing, nothing acknowledged, for
            // write-stall-ms): on a loaded machine the sends took past its 10 s and he got nothing.
            try $0.set("write-stall-ms", "600000")
        }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (carol, _) = try await server.client("carol")
        let (bobJoin, bobJoinEvents) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [bobJoin, carol])
        let quiet = try await alice.channels.create(in: g.serverID, name: "quiet")
        _ = try await bobJoinEvents.notification(.memberJoined)
        bobJoin.close()
        let slow = try RawConnection(port: server.port, receiveBuffer: 4096)
        guard slow.loginAndSync(server.token("bob")) != nil else { Issue.record("login failed"); return }
        var sub = GHRequest()
        sub.id = 2
        sub.subscribe.type = .channelMsg
        sub.subscribe.targets = [{ var t = GHSubscriptionTarget(); t.serverID = g.serverID; t.channelID = c.channelID; return t }()]
        slow.send(sub)
        sub.id = 3
        sub.subscribe.type = .channelTyping
        slow.send(sub)
        sub.id = 4
        sub.subscribe.type = .channelUnreadCount
        sub.subscribe.targets[0].channelID = quiet.channelID
        slow.send(sub)
        var answered = 0
        while answered < 3, let f = slow.nextFrame() { if f.response.id >= 2 { answered += 1 } }
        // bob stops reading while alice fills his queue past the shedding mark.
        let body = blob(16_000, byte: 7)
        var sent: [GHChannelMessage] = []
        for _ in 0..<8 {
            sent += try await withThrowingTaskGroup(of: GHChannelMessage.self) { group in
                for _ in 0..<50 { group.addTask { try await alice.messages.send(body, to: c.channelID) } }
                var out: [GHChannelMessage] = []
                for try await m in group { out.append(m) }
                return out
            }
        }
        let sentUIDs = sent.sorted { $0.seq < $1.seq }.map(\.uid)
        try await carol.messages.sendTyping(c.channelID)
        for i in 0..<5 { _ = try await carol.messages.send("quiet \(i)", to: quiet.channelID) }
        // Now bob reads everything (heartbeats keep him alive while the queue drains).
        var frames: [GHFrame] = []
        var ping = GHRequest()
        ping.heartbeat = GHHeartbeat()
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            slow.send(ping)
            guard let f = slow.nextFrame(timeout: 0.2) else { continue }
            frames.append(f)
            let unreadEvents = frames.filter { if case .unreadChanged? = $0.event.body { true } else { false } }
            if frames.filter({ if case .message? = $0.event.body { true } else { false } }).count == sentUIDs.count && !unreadEvents.isEmpty { break }
        }
        let messages = frames.compactMap { f -> UInt64? in if case .message(let m)? = f.event.body { m.uid } else { nil } }
        #expect(messages == sentUIDs, "every message, in order")
        #expect(!frames.contains { if case .typing? = $0.event.body { true } else { false } }, "typing was shed")
        let unread = frames.compactMap { f -> GHUnreadInfo? in if case .unreadChanged(let u)? = f.event.body { u } else { nil } }
        #expect(unread.map(\.unreadCount) == [5], "unread updates waited and collapsed to the latest")
    }
}

extension BackpressureConformanceTests {
    @Test func pastTheCapOnAllQueuedBytesTheLargestQueueIsCutFirst() async throws {
        let server = try TestServer {
            try $0.set("small-server-threshold", "100")
            try $0.set("outbound-hard-cap-bytes", "67108864")
            try $0.set("outbound-soft-cap-bytes", "67108864")
            try $0.set("outbound-total-cap-bytes", "2097152")
        }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bobJoin, bobEvents) = try await server.client("bob")
        let (carol, carolEvents) = try await server.client("carol")
        let (_, c) = try await guild(server, owner: alice, members: [bobJoin, carol])
        _ = try await bobEvents.notification(.memberJoined)
        bobJoin.close()
        let slow = try RawConnection(port: server.port, receiveBuffer: 4096)
        guard slow.loginAndSync(server.token("bob")) != nil else { Issue.record("login failed"); return }
        let body = blob(16_000, byte: 1)
        var sent = 0
        for _ in 0..<8 {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<50 { group.addTask { _ = try await alice.messages.send(body, to: c.channelID) } }
                try await group.waitForAll()
            }
            sent += 50
        }
        // bob's queue is by far the largest: the next sweep cuts it; carol, who reads, is untouched.
        _ = try await waitFor("bob's connection to be cut") { slow.wasCut ? true : nil }
        _ = try await waitFor("carol to receive all") { carolEvents.messages.count >= sent ? true : nil }
        #expect(carol.isConnected)
    }
}

extension BackpressureConformanceTests {
    @Test func aSessionWhoseWritesStallIsCutEvenBelowTheCaps() async throws {
        let server = try TestServer {
            try $0.set("small-server-threshold", "100")
            try $0.set("outbound-hard-cap-bytes", "67108864")
            try $0.set("outbound-soft-cap-bytes", "67108864")
            try $0.set("write-stall-ms", "300")
            try $0.set("login-deadline-ms", "1000")
        }
        defer { server.stop() }
        let (alice, c, slow, login) = try await slowReader(server)
        let body = blob(16_000, byte: 2)
        // Enough to fill the kernel's buffers and leave bytes queued, far below the caps.
        for _ in 0..<4 {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<50 { group.addTask { _ = try await alice.messages.send(body, to: c.channelID) } }
                try await group.waitForAll()
            }
        }
        _ = try await waitFor("bob's stalled connection to be cut") { slow.wasCut ? true : nil }
        let again = try RawConnection(port: server.port)
        again.resume(server.token("bob"), sessionID: login.sessionID, lastEventSeq: 1)
        let answer = again.nextFrame()?.response.login
        #expect(answer?.resumed == true)
        #expect(answer?.previousCloseReason == .slowConsumer)
    }
}

extension BackpressureConformanceTests {
    /// docs/architecture.md: a publisher stops being read while the loop's queued
    /// outbound bytes are past `outbound-pause-bytes`, and goes on, losing
    /// nothing, once they drain. (bob's socket takes nothing while he does not
    /// read: with `outbound-pause-stuck-ms` at ten minutes he counts as a reader
    /// who will catch up, however slowly a loaded machine runs the test.)
    @Test func aPublisherWaitsWhileTheFanOutIsQueuedAndLosesNothing() async throws {
        let server = try TestServer {
            try $0.set("small-server-threshold", "100")
            try $0.set("outbound-pause-bytes", "65536")
            try $0.set("outbound-pause-stuck-ms", "600000")
            try $0.set("outbound-hard-cap-bytes", "67108864")
            try $0.set("outbound-soft-cap-bytes", "67108864")
            try $0.set("write-stall-ms", "600000")
        }
        defer { server.stop() }
        let (alice, c, slow, bobLogin) = try await slowReader(server)
        // bob does not read; alice publishes far more than the kernel's buffers hold.
        let body = blob(16_000, byte: 3)
        let total = 400
        let done = Counter()
        let publishing = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<total { group.addTask { _ = try await alice.messages.send(body, to: c.channelID); done.add() } }
                try await group.waitForAll()
            }
        }
        // alice's sends stop being answered: her requests wait unread.
        var last = -1, since = Date()
        // Under the whole suite's load the answers before the pause may come slowly: up to a minute.
        let stalled = try await waitFor("alice's sends to stall", timeout: 60) { () -> Int? in
            let now = done.value
            if now != last { last = now; since = Date() }
            return now > 0 && Date().timeIntervalSince(since) > 0.3 ? now : nil
        }
        #expect(stalled < total, "the publisher was paused")
        // bob reads: the queues drain, alice goes on, and bob gets every message in order.
        var uids: [UInt64] = []
        var ping = GHRequest()
        ping.heartbeat = GHHeartbeat()
        let deadline = Date().addingTimeInterval(90)
        while uids.count < total, Date() < deadline {
            slow.send(ping)
            guard let f = slow.nextFrame(timeout: 0.2) else { continue }
            if case .message(let m)? = f.event.body { uids.append(m.seq) }
        }
        try await publishing.value
        #expect(done.value == total)
        #expect(uids == Array(1...UInt64(total)), "every message, in order; bob \(bobLogin.sessionID) alice \(alice.state.withLock { $0.sessionID })")
    }
}

extension BackpressureConformanceTests {
    /// docs/reliability.md S3: a reader whose socket takes nothing does not hold
    /// publishers (past `outbound-pause-stuck-ms` its bytes are not waited
    /// for): every send is answered while bob reads nothing, and the total
    /// cap, checked in the turn that crosses it, cuts him (the session with
    /// the most queued) long before the write-stall cut would.
    @Test func aReaderThatTakesNothingDoesNotHoldThePublisherAndTheTotalCapCutsIt() async throws {
        let server = try TestServer {
            try $0.set("small-server-threshold", "100")
            try $0.set("outbound-pause-bytes", "262144")
            try $0.set("outbound-hard-cap-bytes", "67108864")
            try $0.set("outbound-soft-cap-bytes", "67108864")
            try $0.set("outbound-total-cap-bytes", "2097152")
            try $0.set("write-stall-ms", "60000")
        }
        defer { server.stop() }
        let (alice, c, slow, _) = try await slowReader(server)
        let body = blob(16_000, byte: 4)
        let total = 600
        let done = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<total { group.addTask { _ = try await alice.messages.send(body, to: c.channelID); done.add() } }
            try await group.waitForAll()
        }
        #expect(done.value == total, "every send answered while bob read nothing")
        try await waitUntil("bob cut by the total cap") { slow.wasCut }
    }
}

/// alice owns a guild with bob, who is logged in on a raw connection with
/// a small receive buffer and reads only when the test says so.
func slowReader(_ server: TestServer) async throws -> (GuildhallClient, GHChannelInfo, RawConnection, GHLoginResult) {
    // alice's sends may rightly wait unread while bob's queue drains, which under the whole
    // suite's load took longer than the SDK's 10 s request timeout: what these tests check is
    // that the sends are answered and nothing is lost, within their own deadlines.
    let (alice, _) = try await server.client("alice", requestTimeoutMs: 120_000)
    let (bobJoin, bobEvents) = try await server.client("bob")
    let (_, c) = try await guild(server, owner: alice, members: [bobJoin])
    _ = try await bobEvents.notification(.memberJoined)
    bobJoin.close()
    let slow = try RawConnection(port: server.port, receiveBuffer: 4096)
    guard let login = slow.loginAndSync(server.token("bob")) else { throw WaitTimeout(what: "bob's login and sync") }
    return (alice, c, slow, login)
}

/// A count several tasks add to.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func add() { lock.withLock { n += 1 } }
    var value: Int { lock.withLock { n } }
}

extension BackpressureConformanceTests {
    /// docs/architecture.md: past `store-queue-max` pending commits publishers are not
    /// read; once commits drain they are read again and every send they
    /// made meanwhile is handled, whatever the pauses in between.
    @Test func publishersPausedForTheStoreGoOnAndEverySendIsAnswered() async throws {
        let server = try TestServer { try $0.set("store-queue-max", "4") }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        let each = 300
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in [alice, bob] {
                for i in 0..<each { group.addTask { _ = try await client.messages.send("m\(i)", to: c.channelID) } }
            }
            try await group.waitForAll()
        }
        let page = try await alice.messages.history(of: c.channelID, limit: 100)
        #expect(page.messages.map(\.seq).max() == UInt64(2 * each))
    }
}

/// A gate that stays open once opened: a reconnect that reached the old
/// server before a restart and must try again passes at once (a semaphore's
/// one signal would let only the first through, and the next wait out its timeout).
final class Gate: @unchecked Sendable {
    private let condition = NSCondition()
    private var isOpen = false

    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }

    func wait(seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        while !isOpen, condition.wait(until: deadline) {}
        condition.unlock()
    }
}
