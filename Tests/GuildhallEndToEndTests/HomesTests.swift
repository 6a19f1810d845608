// Homes spread by id (docs/architecture.md, docs/cluster.md): with two loops, guilds and
// users are homed on both, and everything still meets: a user homed on one
// loop is a member of guilds homed on either, mentions and direct messages
// reach the inbox at the user's home (offline sync dresses them at the
// guild's home), lists across guilds gather from every home, and a restart
// with another number of loops moves every home and loses nothing. These
// tests run with two loops whatever GUILDHALL_LOOPS says.

import Foundation
@testable import GuildhallClient
import GuildhallCore
import GuildhallWire
import Testing

@Suite struct HomesTests {
    static let map = HomeMap(loops: 2)

    /// The first name with `prefix` that is homed on `home`.
    static func user(_ prefix: String, on home: Int) -> String {
        var i = 0
        while map.home(user: "\(prefix)\(i)") != home { i += 1 }
        return "\(prefix)\(i)"
    }

    /// A guild with a channel on each home: a guild is made on the loop its
    /// creator's connection landed on, so `owner` connects until both are covered.
    static func guildOnEachHome(_ server: TestServer, owner: String) async throws -> [(GHServerInfo, GHChannelInfo)] {
        var byHome: [Int: (GHServerInfo, GHChannelInfo)] = [:]
        for attempt in 0..<64 where byHome.count < 2 {
            let (creator, _) = try await server.client(owner, device: "maker\(attempt)")
            defer { creator.close() }
            let g = try await creator.servers.create(name: "guild \(attempt)")
            let home = map.home(guild: g.serverID)
            if byHome[home] == nil { byHome[home] = (g, try await creator.channels.create(in: g.serverID, name: "general")) }
        }
        #expect(byHome.count == 2, "64 connections all landed on one loop")
        return byHome.keys.sorted().compactMap { byHome[$0] }
    }

    @Test func aUserHomedOnOneLoopMeetsGuildsAndPeersHomedOnTheOther() async throws {
        let server = try TestServer {
            $0.loops = 2
            try $0.set("small-server-threshold", "100")
        }
        defer { server.stop() }
        let aliceName = Self.user("alice", on: 0), bobName = Self.user("bob", on: 1)
        let guilds = try await Self.guildOnEachHome(server, owner: aliceName)
        guard guilds.count == 2 else { return }
        let (alice, _) = try await server.client(aliceName)
        var (bob, _) = try await server.client(bobName)
        for (g, _) in guilds { _ = try await bob.servers.join(g.serverID) }
        // A list across guilds gathers from both homes, in id order.
        #expect(try await bob.servers.mine().map(\.serverID) == guilds.map(\.0.serverID).sorted())

        // Offline: a mention in each guild and a direct message (the
        // conversation lives at alice's home, bob's inbox at his).
        bob.close()
        var mentions: [UInt64] = []
        for (_, c) in guilds { mentions.append(try await alice.messages.send("hey @bob", to: c.channelID, mentions: [bobName]).uid) }
        let direct = try await alice.directs.send("psst", to: bobName)
        let (phone, phoneEvents) = try await server.client(bobName, device: "phone")
        defer { phone.close() }
        for uid in mentions + [direct.uid] {
            let m = try await phoneEvents.message("offline item \(uid)") { $0.uid == uid }
            #expect(m.uid == uid)
        }
        _ = try await waitFor("sync completed") { phoneEvents.syncCompletions == 1 ? true : nil }

        // Live: a mention from the guild on the other home reaches bob once, in channel order.
        let events: Recorder
        (bob, events) = try await server.client(bobName)
        defer { bob.close() }
        let channel = guilds[0].1.channelID
        let live = try await alice.messages.send("now @bob", to: channel, mentions: [bobName])
        let after = try await alice.messages.send("and after", to: channel)
        _ = try await events.message("the message after the mention") { $0.uid == after.uid }
        let seen = events.messages.map(\.uid).filter { $0 == live.uid || $0 == after.uid }
        #expect(seen == [live.uid, after.uid])

        // Lookups by UID and by conversation gather from both homes.
        let asked = [mentions[1], direct.uid, mentions[0]]
        #expect(try await bob.messages.get(asked).map(\.uid) == asked)
        #expect(try await bob.directs.list().map(\.peerID) == [aliceName])
        try await bob.directs.ackMessageRead(direct.uid)
        #expect(try await alice.directs.sentStatus([direct.uid]) == [.read])
        await expectError(.notFound) { try await bob.directs.ackMessageRead(mentions[0] ^ 1) }
    }

    /// A home where a user is in no guild only lists the user's sessions;
    /// once one of them joins a guild there, every session of the user is served.
    @Test func aHomeServesEverySessionOfAUserOnceOneOfThemJoinsAGuildThere() async throws {
        let server = try TestServer {
            $0.loops = 2
            try $0.set("small-server-threshold", "100")
        }
        defer { server.stop() }
        let guilds = try await Self.guildOnEachHome(server, owner: "alice")
        guard guilds.count == 2 else { return }
        let (alice, _) = try await server.client("alice")
        let (phone, phoneEvents) = try await server.client("carol", device: "phone")
        let (desk, _) = try await server.client("carol", device: "desk")
        defer { alice.close(); phone.close(); desk.close() }
        for (g, c) in guilds {
            _ = try await desk.servers.join(g.serverID)
            let m = try await alice.messages.send("welcome", to: c.channelID)
            _ = try await phoneEvents.message("the guild's message on the phone") { $0.uid == m.uid }
        }
    }

    /// Interest split in two: a message reaches each gateway with subscribers
    /// (a large server) or online members (a small one) once, and each gateway
    /// writes every recipient its own unread numbers, a mention its cursor, and
    /// stops at an unsubscribe or a leave.
    @Test(arguments: [false, true])
    func recipientsOnBothLoopsGetEachMessageOnceWithTheirOwnUnreadNumbers(smallServer: Bool) async throws {
        let server = try TestServer {
            $0.loops = 2
            try $0.set("small-server-threshold", smallServer ? "100" : "1")
        }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let g = try await alice.servers.create(name: "large")
        let c = try await alice.channels.create(in: g.serverID, name: "general")
        var readers: [(name: String, client: GuildhallClient, events: Recorder, loop: UInt64)] = []
        for i in 0..<16 {
            let name = "reader\(i)"
            let (r, events) = try await server.client(name)
            _ = try await r.servers.join(g.serverID)
            if !smallServer { #expect(try await r.sub(.channelMsg, g.serverID, [c.channelID]) == [.targetOk]) }
            readers.append((name, r, events, LoopsTests.loop(ofSession: r.state.withLock { $0.sessionID }) ?? 99))
        }
        defer { for r in readers { r.client.close() } }
        #expect(Set(readers.map(\.loop)) == [0, 1], "16 connections all landed on one loop")
        var sent: [GHChannelMessage] = []
        for i in 0..<3 { sent.append(try await alice.messages.send("m\(i)", to: c.channelID)) }
        // Readers with an even number read up to the first message: their trailers count from there.
        for (i, r) in readers.enumerated() where i % 2 == 0 { _ = try await r.client.messages.markRead(c.channelID, upTo: sent[0].seq) }
        let mention = try await alice.messages.send("@reader1", to: c.channelID, mentions: ["reader1"])
        for (i, r) in readers.enumerated() {
            let got = try await r.events.message("the mention on \(r.name)") { $0.uid == mention.uid }
            #expect(got.uid == mention.uid)
            let uids = r.events.messages.map(\.uid)
            #expect(uids == sent.map(\.uid) + [mention.uid], "\(r.name) on loop \(r.loop)")
            let unread = r.events.messageUnread.withLock { $0[mention.uid] }
            #expect(unread?.unreadCount == (i % 2 == 0 ? mention.seq - sent[0].seq : mention.seq), "\(r.name)")
            #expect(unread?.mentionedCount == (i == 1 ? 1 : 0), "\(r.name)")
        }
        // Unsubscribed (or gone from a small server), a reader gets no more; the others still do.
        if smallServer {
            try await readers[0].client.servers.leave(g.serverID)
        } else {
            _ = try await readers[0].client.sub(.channelMsg, g.serverID, [c.channelID], .unsubscribe)
        }
        let last = try await alice.messages.send("last", to: c.channelID)
        _ = try await readers[1].events.message("the last message") { $0.uid == last.uid }
        let check = try await alice.messages.send("after last", to: c.channelID)
        _ = try await readers[2].events.message("the check") { $0.uid == check.uid }
        #expect(!readers[0].events.messages.contains { $0.uid == last.uid || $0.uid == check.uid })
    }

    /// Auto mode ranks all of a user's channels in one ladder, whatever home
    /// holds them: with room for one channel at each rich level, two channels
    /// on two homes get one each, and activity in the colder one swaps them.
    @Test func autoModeKeepsOneLadderAcrossHomes() async throws {
        let server = try TestServer {
            $0.loops = 2
            try $0.set("small-server-threshold", "1")
            try $0.set("limit-channel-msg", "1")
            try $0.set("limit-channel-unread-count", "1")
        }
        defer { server.stop() }
        let guilds = try await Self.guildOnEachHome(server, owner: "alice")
        guard guilds.count == 2 else { return }
        let (auto, events) = try await server.client("alice", device: "auto", auto: true)
        defer { auto.close() }
        /// Each channel's type after every subscription change so far.
        func types() -> [UInt64: GHSubscriptionType] {
            var out: [UInt64: GHSubscriptionType] = [:]
            for n in events.notifications where n.kind == .subscriptionChanged {
                for e in n.subscriptions where e.target.channelID != 0 { out[e.target.channelID] = e.type }
            }
            return out
        }
        let channels = guilds.map(\.1)
        // Ranked as the ladder ranks them: by activity (here creation), ties to the newer id.
        let rank = { (c: GHChannelInfo) in (c.createdAt, c.channelID) }
        let newer = channels.max { rank($0) < rank($1) }!, older = channels.min { rank($0) < rank($1) }!
        let expected: [UInt64: GHSubscriptionType] = [newer.channelID: .channelMsg, older.channelID: .channelUnreadCount]
        _ = try await waitFor("one ladder over both homes' channels") { types() == expected ? true : nil }
        _ = try await auto.messages.send("activity in the older channel", to: older.channelID)
        let swapped: [UInt64: GHSubscriptionType] = [older.channelID: .channelMsg, newer.channelID: .channelUnreadCount]
        _ = try await waitFor("the older channel promoted, the newer demoted") { types() == swapped ? true : nil }
    }

    /// One loop, then two, then one again: every home moves (and merges) at a restart, and nothing is lost.
    @Test func aRestartWithAnotherNumberOfLoopsMovesEveryHomeAndLosesNothing() async throws {
        let server = try TestServer { $0.loops = 1 }
        defer { server.stop() }
        let aliceName = Self.user("alice", on: 0), bobName = Self.user("bob", on: 1)
        var guilds: [(GHServerInfo, GHChannelInfo)] = []
        var sent: [UInt64] = []
        do {
            let (alice, _) = try await server.client(aliceName)
            let (bob, _) = try await server.client(bobName)
            defer { alice.close(); bob.close() }
            // Guilds until both of two loops' homes hold some (a guild's home is a hash of its id).
            for i in 0..<64 where guilds.count < 4 || Set(guilds.map { Self.map.home(guild: $0.0.serverID) }).count < 2 {
                let g = try await alice.servers.create(name: "guild \(i)")
                guilds.append((g, try await alice.channels.create(in: g.serverID, name: "general")))
                _ = try await bob.servers.join(g.serverID)
                sent.append(try await alice.messages.send("before \(i)", to: guilds[i].1.channelID).uid)
            }
        }
        #expect(Set(guilds.map { Self.map.home(guild: $0.0.serverID) }).count == 2, "64 guilds all homed on one of two loops")
        try server.restart { $0.loops = 2 }
        var after: [UInt64] = []
        var direct: UInt64 = 0
        do {
            let (alice, _) = try await server.client(aliceName)
            let (bob, bobEvents) = try await server.client(bobName)
            defer { alice.close(); bob.close() }
            #expect(try await bob.servers.mine().map(\.serverID) == guilds.map(\.0.serverID).sorted())
            #expect(try await bob.messages.get(sent).map(\.uid) == sent)
            for (i, (_, c)) in guilds.enumerated() {
                #expect(try await bob.messages.history(of: c.channelID).messages.map(\.uid) == [sent[i]])
                let m = try await alice.messages.send("after \(i)", to: c.channelID)
                #expect(m.seq == 2)
                _ = try await bobEvents.message("after \(i)") { $0.uid == m.uid }
                after.append(m.uid)
            }
            direct = try await alice.directs.send("across the restart", to: bobName).uid
        }
        // And back to one loop: the homes merge, and a new device of bob's syncs what was addressed to him.
        try server.restart { $0.loops = 1 }
        let (alice, _) = try await server.client(aliceName)
        let (phone, phoneEvents) = try await server.client(bobName, device: "phone")
        defer { alice.close(); phone.close() }
        _ = try await phoneEvents.message("the direct message, synced") { $0.uid == direct }
        #expect(try await phone.directs.list().map(\.peerID) == [aliceName])
        for (i, (_, c)) in guilds.enumerated() {
            #expect(try await phone.messages.history(of: c.channelID).messages.map(\.uid).sorted() == [sent[i], after[i]].sorted())
            #expect(try await alice.messages.send("third \(i)", to: c.channelID).seq == 3)
        }
    }
}
