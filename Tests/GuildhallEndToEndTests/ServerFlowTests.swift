// The whole path through the SDK against the real server: servers, members,
// channels, messages, history, notifications, restart.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
import CSQLite
import GuildhallServer

@Suite struct ServerFlowTests {
    @Test func aliceAndBobChatInAServer() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (g, channel) = try await guild(server, owner: alice, members: [bob])
        #expect(g.memberCount == 1)
        #expect(try await alice.servers.get([g.serverID]).first?.memberCount == 2)

        let sent = try await alice.messages.send("hello bob", to: channel.channelID, mentions: ["bob"])
        #expect(sent.seq == 1)
        #expect(sent.senderID == "alice")
        #expect(sent.uid != 0 && sent.sentTime != 0)
        let received = try await bobEvents.message { $0.uid == sent.uid }
        #expect(received == sent)
        #expect(received.body.text == "hello bob")
        #expect(received.mentions == ["bob"])

        let reply = try await bob.messages.send("hi alice", to: channel.channelID)
        #expect(reply.seq == 2)
        let page = try await bob.messages.history(of: channel.channelID)
        #expect(page.messages.map(\.uid) == [sent.uid, reply.uid])
        #expect(try await alice.messages.get([reply.uid, sent.uid]).map(\.seq) == [2, 1])
        alice.close()
        bob.close()
    }

    @Test func theSendingSessionGetsTheAnswerAndTheSendersOtherDevicesGetTheEvent() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (phone, phoneEvents) = try await server.client("alice", device: "phone")
        let (laptop, laptopEvents) = try await server.client("alice", device: "laptop")
        let (_, channel) = try await guild(server, owner: phone, members: [])
        let sent = try await phone.messages.send("from my phone", to: channel.channelID)
        _ = try await laptopEvents.message { $0.uid == sent.uid }
        // A later message reaches the phone too, so the phone would have seen the first by now.
        let later = try await laptop.messages.send("from my laptop", to: channel.channelID)
        _ = try await phoneEvents.message { $0.uid == later.uid }
        #expect(!phoneEvents.messages.contains { $0.uid == sent.uid })
    }

    @Test func historyPagesBackwardAndForwardAtMost100AtATime() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (_, channel) = try await guild(server, owner: alice, members: [])
        for i in 1...120 { _ = try await alice.messages.send("m\(i)", to: channel.channelID) }
        let newest = try await alice.messages.history(of: channel.channelID, limit: 100)
        #expect(newest.messages.map(\.seq) == Array(21...120))
        #expect(newest.moreAvailable)
        let older = try await alice.messages.history(of: channel.channelID, before: 21, limit: 100)
        #expect(older.messages.map(\.seq) == Array(1...20))
        #expect(!older.moreAvailable)
        let after = try await alice.messages.history(of: channel.channelID, after: 115, limit: 10)
        #expect(after.messages.map(\.seq) == Array(116...120))
        await expectError(.limitReached) { _ = try await alice.messages.history(of: channel.channelID, limit: 101) }
    }

    @Test func everythingIsStillThereAfterARestart() async throws {
        let server = try TestServer()
        defer { server.stop() }
        var (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (g, channel) = try await guild(server, owner: alice, members: [bob])
        let first = try await alice.messages.send("before restart", to: channel.channelID)
        alice.close()
        bob.close()
        try server.restart()
        (alice, _) = try await server.client("alice")
        #expect(try await alice.servers.mine().map(\.serverID) == [g.serverID])
        #expect(try await alice.members.list(of: g.serverID).map(\.userID) == ["alice", "bob"])
        let channels = try await alice.channels.list(of: g.serverID)
        #expect(channels.map(\.channelID) == [channel.channelID])
        #expect(channels.first?.lastSeq == 1)
        #expect(try await alice.messages.history(of: channel.channelID).messages.map(\.uid) == [first.uid])
        let second = try await alice.messages.send("after restart", to: channel.channelID)
        #expect(second.seq == 2)
        #expect(second.uid > first.uid)
    }

    @Test func aResendWithTheSameClientIDReturnsTheOriginal() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (_, channel) = try await guild(server, owner: alice, members: [])
        async let a = alice.messages.send("once", to: channel.channelID, clientID: "c-1")
        async let b = alice.messages.send("once", to: channel.channelID, clientID: "c-1")
        let (x, y) = try await (a, b)
        #expect(x.uid == y.uid)
        let again = try await alice.messages.send("once", to: channel.channelID, clientID: "c-1")
        #expect(again.uid == x.uid)
        try server.restart()
        let (fresh, _) = try await server.client("alice", device: "d2")
        #expect(try await fresh.messages.send("once", to: channel.channelID, clientID: "c-1").uid == x.uid)
        #expect(try await fresh.messages.history(of: channel.channelID).messages.count == 1)
        #expect(try await fresh.messages.send("other", to: channel.channelID, clientID: "c-2").seq == 2)
    }

    @Test func customBodiesKeepTheirTypeAndBytes() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (_, channel) = try await guild(server, owner: alice, members: [])
        var body = GHMessageBody()
        body.custom.type = "sticker"
        body.custom.data = Data([0, 1, 2, 250])
        let sent = try await alice.messages.send(body, to: channel.channelID)
        let stored = try await alice.messages.get([sent.uid])
        #expect(stored.first?.body.custom.type == "sticker")
        #expect(stored.first?.body.custom.data == Data([0, 1, 2, 250]))
    }

    @Test func messageLimitsAreEnforced() async throws {
        let server = try TestServer { try $0.set("max-body-bytes", "10") }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (_, channel) = try await guild(server, owner: alice, members: [])
        _ = try await alice.messages.send(String(repeating: "a", count: 10), to: channel.channelID)
        await expectError(.tooLarge) { _ = try await alice.messages.send(String(repeating: "a", count: 11), to: channel.channelID) }
        await expectError(.tooLarge) {
            _ = try await alice.messages.send("hi", to: channel.channelID, mentions: (0...100).map { "u\($0)" })
        }
        await expectError(.badRequest) { _ = try await alice.messages.send(GHMessageBody(), to: channel.channelID) }
        #expect(try await alice.messages.history(of: channel.channelID).messages.count == 1)
    }
}

/// The runner's contract (EffectRunner.swift): when a commit fails, the
/// caller gets a 503 and nothing of the change is visible to anyone. A row or
/// a trigger put into the database from outside stands in for a failing
/// commit here, which only SQLite sees: these servers keep the journal off
/// (`commit-journal`), whose appends come before SQLite. FailedCommitTests
/// fill the disk itself, which the journal's appends fail on too.
@Suite struct CommitFailureTests {
    static func sqliteOnly(_ s: inout Settings) { s.commitJournal = "off" }

    /// Writes a message row into the server's database from outside, at
    /// `seq` of `channel`: the server's own next send there then fails to commit.
    /// `direct`: `channel` is a direct conversation (its messages have server 0, and it has no channel row).
    static func occupy(seq: UInt64, of channel: UInt64, in folder: String, direct: Bool = false) throws {
        try execute("""
            INSERT INTO messages(uid, server_id, channel_id, seq, sender, sent_time, kind, text, custom_type, payload, mentions, mention_all, need_receipt, client_id)
            \(direct ? "VALUES(1, 0, \(channel), \(seq), 'intruder', 1, 0, 'x', '', NULL, '', 0, 0, '')"
                      : "SELECT 1, server_id, id, \(seq), 'intruder', 1, 0, 'x', '', NULL, '', 0, 0, '' FROM channels WHERE id = \(channel)")
            """, in: folder)
    }

    /// A server whose metrics the test reads (`commitFailures`).
    static func watchedServer() throws -> TestServer {
        try TestServer {
            sqliteOnly(&$0)
            $0.adminListen = "127.0.0.1:0"
            $0.adminToken = "op-secret"
        }
    }

    /// `guildhall_commit_failures_total` of a `watchedServer`.
    static func commitFailures(_ server: TestServer) throws -> Double {
        let scrape = try HTTPExchange.request("GET", "/metrics", port: server.adminPort, token: "op-secret").body
        return AdminEndpointTests.metric(scrape, "guildhall_commit_failures_total")
    }

    /// The integer `sql` selects from the server's database (0 when no row does; nil when it cannot be read).
    static func integer(_ sql: String, in folder: String) -> Int64? {
        var db: OpaquePointer?
        guard sqlite3_open_v2("\(folder)/guildhall.db", &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { return nil }
        defer { sqlite3_close(db) }
        var st: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &st, nil) == SQLITE_OK else { return nil }
        defer { sqlite3_finalize(st) }
        return sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0
    }

    /// Runs `sql` on the server's database from outside (a trigger that refuses a write stands in for a failing disk).
    static func execute(_ sql: String, in folder: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open("\(folder)/guildhall.db", &db) == SQLITE_OK else { throw WaitTimeout(what: "open the database") }
        defer { sqlite3_close(db) }
        sqlite3_busy_timeout(db, 5000)
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw WaitTimeout(what: "\(sql): \(String(cString: sqlite3_errmsg(db)))") }
    }

    /// A change the home makes by itself (a timed ban ending) goes through the
    /// runner like a request's: while its commit fails the ban holds in
    /// memory as on disk, the failure is counted, and once the disk takes
    /// writes again the next sweep lifts it.
    @Test func aTimedBanWhoseLiftFailsToCommitHoldsUntilTheDiskIsBack() async throws {
        let server = try Self.watchedServer()
        defer { server.stop() }
        func failures() throws -> Double { try Self.commitFailures(server) }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (g, _) = try await guild(server, owner: alice, members: [bob])
        try await alice.members.ban("bob", from: g.serverID, until: server.clock.now() + 30_000)
        #expect(try failures() == 0)
        try Self.execute("CREATE TRIGGER refuse_ban_lift BEFORE DELETE ON bans BEGIN SELECT RAISE(ABORT, 'refused'); END", in: server.folder)
        server.clock.advance(ms: 31_000)
        _ = try await waitFor("the lift's commit to fail") { try failures() >= 1 ? true : nil }
        await expectError(.forbidden) { _ = try await bob.servers.join(g.serverID) }
        try Self.execute("DROP TRIGGER refuse_ban_lift", in: server.folder)
        try await waitUntil("the ban lifted once the disk took writes") {
            do { _ = try await bob.servers.join(g.serverID); return true } catch let e as GuildhallError where e.code == .forbidden { return false }
        }
        // Lifted for good: what is on disk agrees after a restart.
        try server.restart()
        let (again, _) = try await server.client("alice", device: "after")
        #expect(try await again.members.list(of: g.serverID).contains { $0.userID == "bob" })
    }

    /// Read positions a sender's own messages moved are written in groups by
    /// a timer; when that commit fails they are written again with the next
    /// group, so after a restart the sender has still read its own messages.
    @Test func readPositionsWhoseWriteFailedAreWrittenAgain() async throws {
        let server = try Self.watchedServer()
        defer { server.stop() }
        func failures() throws -> Double { try Self.commitFailures(server) }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        _ = try await bob.messages.send("one", to: c.channelID)
        try Self.execute("""
            CREATE TRIGGER refuse_positions BEFORE INSERT ON read_positions BEGIN SELECT RAISE(ABORT, 'refused'); END;
            CREATE TRIGGER refuse_position_updates BEFORE UPDATE ON read_positions BEGIN SELECT RAISE(ABORT, 'refused'); END
            """, in: server.folder)
        // Alice's own message moves her position past bob's: written by the timer, which fails.
        _ = try await alice.messages.send("two", to: c.channelID)
        _ = try await waitFor("the positions' commit to fail") { try failures() >= 1 ? true : nil }
        try Self.execute("DROP TRIGGER refuse_positions; DROP TRIGGER refuse_position_updates", in: server.folder)
        let position = "SELECT read_seq FROM read_positions WHERE user_id = 'alice' AND channel_id = \(c.channelID)"
        _ = try await waitFor("the positions written again") { Self.integer(position, in: server.folder) == 2 ? true : nil }
        try server.restart()
        let (again, _) = try await server.client("alice", device: "after")
        #expect(try await again.messages.unread([c.channelID]).first?.unreadCount == 0)
    }

    /// A device's acknowledged inbox position (its offline-sync cursor) is
    /// written by a timer; when that commit fails it is owed again and written
    /// with the next, so a later sync does not send the device what it has.
    @Test func aCursorWhoseWriteFailedIsWrittenAgain() async throws {
        let server = try Self.watchedServer()
        defer { server.stop() }
        func failures() throws -> Double { try Self.commitFailures(server) }
        func cursor() -> Int64 { Self.integer("SELECT ord FROM sync_cursors WHERE user_id = 'bob' AND device_id = 'd1'", in: server.folder) ?? -1 }
        let (alice, _) = try await server.client("alice")
        let (_, bobHeard) = try await server.client("bob")
        let before = cursor()
        try Self.execute("""
            CREATE TRIGGER refuse_cursors BEFORE INSERT ON sync_cursors BEGIN SELECT RAISE(ABORT, 'refused'); END;
            CREATE TRIGGER refuse_cursor_updates BEFORE UPDATE ON sync_cursors BEGIN SELECT RAISE(ABORT, 'refused'); END
            """, in: server.folder)
        // A direct message is an item of bob's inbox; his SDK acknowledges it within a second.
        let m = try await alice.directs.send("hello", to: "bob")
        _ = try await bobHeard.message { $0.uid == m.uid }
        _ = try await waitFor("the cursor's commit to fail") { try failures() >= 1 ? true : nil }
        #expect(cursor() == before)
        try Self.execute("DROP TRIGGER refuse_cursors; DROP TRIGGER refuse_cursor_updates", in: server.folder)
        _ = try await waitFor("the cursor written again") { cursor() > before ? true : nil }
    }

    /// Going offline stores the user's last-seen time; when that commit
    /// fails it is stored again with the next tick of the home's timer.
    @Test func aLastSeenTimeWhoseWriteFailedIsWrittenAgain() async throws {
        let server = try Self.watchedServer()
        defer { server.stop() }
        func failures() throws -> Double { try Self.commitFailures(server) }
        let (bob, _) = try await server.client("bob")
        let lastSeen = "SELECT last_seen FROM presence WHERE user_id = 'bob'"
        #expect(Self.integer(lastSeen, in: server.folder) == 0)
        try Self.execute("""
            CREATE TRIGGER refuse_presence BEFORE INSERT ON presence BEGIN SELECT RAISE(ABORT, 'refused'); END;
            CREATE TRIGGER refuse_presence_updates BEFORE UPDATE ON presence BEGIN SELECT RAISE(ABORT, 'refused'); END
            """, in: server.folder)
        bob.close()
        _ = try await waitFor("the last-seen commit to fail") { try failures() >= 1 ? true : nil }
        #expect(Self.integer(lastSeen, in: server.folder) == 0)
        try Self.execute("DROP TRIGGER refuse_presence; DROP TRIGGER refuse_presence_updates", in: server.folder)
        _ = try await waitFor("the last-seen time written again") { (Self.integer(lastSeen, in: server.folder) ?? 0) > 0 ? true : nil }
    }

    @Test func aSendWhoseCommitFailsIsAnswered503AndReachesNobody() async throws {
        let server = try TestServer(Self.sqliteOnly)
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        _ = try await alice.messages.send("one", to: c.channelID)
        _ = try await waitFor("bob to get the first message") { bobEvents.messages.count == 1 ? true : nil }
        try Self.occupy(seq: 2, of: c.channelID, in: server.folder)
        do {
            _ = try await alice.messages.send("two", to: c.channelID, mentions: ["bob"])
            Issue.record("a send whose commit failed was acknowledged")
        } catch let e as GuildhallError {
            #expect(e.code == .unavailable)
            #expect(e.message == "storage is unavailable; the message was not sent, retry later")
        }
        // The next send works, and bob hears of it, not of the failed one.
        let three = try await alice.messages.send("three", to: c.channelID)
        _ = try await waitFor("bob to get the next message") { bobEvents.messages.count == 2 ? true : nil }
        #expect(bobEvents.messages.map(\.uid) == [bobEvents.messages[0].uid, three.uid])
        #expect(!bobEvents.messages.contains { $0.senderID == "alice" && $0.body.text == "two" })
    }

    /// A direct message's commit settles through `StateChange.directMessageSent`: when it fails,
    /// the sender gets the 503 and the conversation does not move (its count, its last message).
    @Test func aDirectMessageWhoseCommitFailsIsAnswered503AndChangesNothing() async throws {
        let server = try TestServer(Self.sqliteOnly)
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (_, bobHeard) = try await server.client("bob")
        let one = try await alice.directs.send("one", to: "bob")
        _ = try await bobHeard.message { $0.uid == one.uid }
        let conversation = one.channelID
        let before = try #require(try await alice.directs.list().first { $0.conversationID == conversation })
        try Self.occupy(seq: one.seq + 1, of: conversation, in: server.folder, direct: true)
        await expectError(.unavailable) { _ = try await alice.directs.send("two", to: "bob", clientID: "second") }
        #expect(try await alice.directs.list().first { $0.conversationID == conversation } == before)
        // The resend of the failed one is a new send now (nothing was kept of it), and it reaches bob.
        let two = try await alice.directs.send("two", to: "bob", clientID: "second")
        #expect(two.seq > one.seq && two.uid != one.uid)
        _ = try await bobHeard.message { $0.uid == two.uid }
        #expect(!bobHeard.messages.contains { $0.senderID == "intruder" })
    }
}
