// README "What clients receive", one test per rule: read positions, exact counts, mention
// counts, coalesced unread-count events, edge-only status events, queries,
// unread info carried on messages, read-your-writes across sessions.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct UnreadConformanceTests {
    @Test func markingReadMovesThePositionAndSendingMovesTheSenders() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        for i in 1...5 { _ = try await alice.messages.send("m\(i)", to: c.channelID) }
        #expect(try await alice.messages.unread([c.channelID]).first?.unreadCount == 0, "the sender has read its own messages")
        var u = try #require(try await bob.messages.unread([c.channelID]).first)
        #expect(u.unreadCount == 5 && u.lastSeq == 5 && u.readSeq == 0 && u.maxCount == 99)
        u = try await bob.messages.markRead(c.channelID, upTo: 3)
        #expect(u.unreadCount == 2 && u.readSeq == 3 && u.ackTimestamp > 0)
        u = try await bob.messages.markRead(c.channelID, upTo: 1)
        #expect(u.readSeq == 3, "positions never move back")
        _ = try await bob.messages.send("bob answers", to: c.channelID)
        #expect(try await bob.messages.unread([c.channelID]).first?.unreadCount == 0)
        #expect(try await bob.messages.markRead(c.channelID).readSeq == 6)
    }

    @Test func aNewMemberStartsWithTheChannelsHistoryRead() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [])
        for i in 1...3 { _ = try await alice.messages.send("old \(i)", to: c.channelID) }
        _ = try await bob.servers.join(g.serverID)
        #expect(try await bob.messages.unread([c.channelID]).first?.unreadCount == 0)
        _ = try await alice.messages.send("new", to: c.channelID)
        #expect(try await bob.messages.unread([c.channelID]).first?.unreadCount == 1)
    }

    @Test func theUnreadCountStaysExactAt10000Unread() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        for batch in 0..<100 {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<100 { group.addTask { _ = try await alice.messages.send("m\(batch)-\(i)", to: c.channelID) } }
                try await group.waitForAll()
            }
        }
        let u = try #require(try await bob.messages.unread([c.channelID]).first)
        #expect(u.unreadCount == 10_000)
        #expect(u.maxCount == 99)
        #expect(try await bob.messages.markRead(c.channelID, upTo: 9_990).unreadCount == 10)
    }

    @Test func theMentionCountCountsMentionsByIdAfterTheReadPosition() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        _ = try await alice.messages.send("@bob 1", to: c.channelID, mentions: ["bob"])
        _ = try await alice.messages.send("@all", to: c.channelID, mentionAll: true)
        let second = try await alice.messages.send("@bob 2", to: c.channelID, mentions: ["bob"])
        #expect(try await bob.messages.unread([c.channelID]).first?.mentionedCount == 2)
        #expect(try await bob.messages.markRead(c.channelID, upTo: second.seq - 1).mentionedCount == 1)
        try server.restart()
        let (again, _) = try await server.client("bob", device: "d2")
        #expect(try await again.messages.unread([c.channelID]).first?.mentionedCount == 1, "mentions survive a restart")
    }

    @Test func aMessageEventCarriesTheRecipientsOwnUnreadInfo() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (carol, carolEvents) = try await server.client("carol")
        let (_, c) = try await guild(server, owner: alice, members: [bob, carol])
        _ = try await alice.messages.send("one", to: c.channelID)
        _ = try await carol.messages.markRead(c.channelID)
        let two = try await alice.messages.send("two", to: c.channelID)
        _ = try await bobEvents.message { $0.uid == two.uid }
        _ = try await carolEvents.message { $0.uid == two.uid }
        let forBob = try #require(bobEvents.messageUnread.withLock { $0[two.uid] })
        let forCarol = try #require(carolEvents.messageUnread.withLock { $0[two.uid] })
        #expect(forBob.unreadCount == 2 && forBob.channelID == c.channelID && forBob.lastSeq == 2 && forBob.maxCount == 99)
        #expect(forCarol.unreadCount == 1 && forCarol.readSeq == 1)
        _ = bob
    }

    @Test func unreadCountSubscribersGetCoalescedChangeEventsInsteadOfMessages() async throws {
        let server = try largeServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        try await bob.sub(.channelUnreadCount, g.serverID, [c.channelID])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<50 { group.addTask { _ = try await alice.messages.send("burst \(i)", to: c.channelID) } }
            try await group.waitForAll()
        }
        let last = try await waitFor("the count to reach 50") { bobEvents.unreads.first { $0.unreadCount == 50 } }
        #expect(last.lastSeq == 50)
        #expect(bobEvents.messages.isEmpty)
        #expect(bobEvents.unreads.count < 50, "changes are coalesced, not one per message (got \(bobEvents.unreads.count))")
        #expect(zip(bobEvents.unreads, bobEvents.unreads.dropFirst()).allSatisfy { $0.unreadCount < $1.unreadCount })
    }

    @Test func unreadStatusSubscribersHearOnlyTheZeroToMoreEdges() async throws {
        let server = try largeServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        try await bob.sub(.channelUnreadStatus, g.serverID, [c.channelID])
        for i in 0..<5 { _ = try await alice.messages.send("m\(i)", to: c.channelID) }
        _ = try await waitFor("unread") { bobEvents.statuses.first { $0.unread } }
        // Reading on another device changes the status: this session hears the edge back to read.
        let (phone, _) = try await server.client("bob", device: "phone")
        _ = try await phone.messages.markRead(c.channelID)
        _ = try await waitFor("read") { bobEvents.statuses.first { !$0.unread } }
        _ = try await alice.messages.send("again", to: c.channelID)
        _ = try await waitFor("unread again") { bobEvents.statuses.filter(\.unread).count == 2 ? true : nil }
        let sentinel = try await alice.messages.send("@bob", to: c.channelID, mentions: ["bob"])
        _ = try await bobEvents.message { $0.uid == sentinel.uid }
        #expect(bobEvents.statuses.map(\.unread) == [true, false, true])
        #expect(bobEvents.unreads.isEmpty)
    }

    @Test func anUnreadQueryAnswersAListOfChannelsInOneCall() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (g, c1) = try await guild(server, owner: alice, members: [bob])
        let c2 = try await alice.channels.create(in: g.serverID, name: "two")
        let hidden = try await alice.channels.create(in: try await alice.servers.create(name: "private").serverID, name: "h")
        _ = try await alice.messages.send("x", to: c2.channelID)
        _ = try await alice.messages.send("y", to: c2.channelID)
        let list = try await bob.messages.unread([c2.channelID, hidden.channelID, c1.channelID])
        #expect(list.map(\.channelID) == [c2.channelID, c1.channelID])
        #expect(list.map(\.unreadCount) == [2, 0])
    }

    @Test func readingOnOneDeviceIsSeenAtOnceOnTheOthers() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (phone, _) = try await server.client("bob", device: "phone")
        let (laptop, laptopEvents) = try await server.client("bob", device: "laptop")
        let (_, c) = try await guild(server, owner: alice, members: [phone])
        for i in 0..<3 { _ = try await alice.messages.send("m\(i)", to: c.channelID) }
        _ = try await phone.messages.markRead(c.channelID)
        #expect(try await laptop.messages.unread([c.channelID]).first?.unreadCount == 0, "read-your-writes on another session")
        let pushed = try await waitFor("the read to reach the laptop") { laptopEvents.unreads.first { $0.channelID == c.channelID } }
        #expect(pushed.unreadCount == 0 && pushed.readSeq == 3)
    }
}
