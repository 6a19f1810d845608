// README "What clients receive", one test per rule: per-target results, limits
// across sessions, last wins, typing independence, auto mode.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

/// A server that counts as large from 2 members on, so subscriptions decide delivery.
func largeServer(_ tweak: @escaping (inout Settings) throws -> Void = { _ in }) throws -> TestServer {
    try TestServer {
        try $0.set("small-server-threshold", "2")
        try tweak(&$0)
    }
}

@Suite struct SubscribeConformanceTests {
    /// A server one is not a member of is answered exactly as one that does not exist (docs/reliability.md A4).
    @Test func subscribeAnswersEachTargetWithSuccessNotFoundOrLimitReached() async throws {
        let server = try largeServer { try $0.set("limit-channel-msg", "1") }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (g, c1) = try await guild(server, owner: alice, members: [bob])
        let c2 = try await alice.channels.create(in: g.serverID, name: "second")
        let other = try await alice.servers.create(name: "Other")
        let otherChannel = try await alice.channels.create(in: other.serverID, name: "x")
        let statuses = try await bob.subscriptions.subscribeChannel(SubscribeChannelParam(subscribeType: .channelMsg, targets: [
                          ChannelTarget(serverID: g.serverID, channelID: c1.channelID),
                          ChannelTarget(serverID: other.serverID, channelID: otherChannel.channelID),
                          ChannelTarget(serverID: g.serverID, channelID: 999),
                          ChannelTarget(serverID: g.serverID, channelID: c2.channelID),
        ]))
        #expect(statuses.map(\.status) == [.targetOk, .targetNotFound, .targetNotFound, .targetLimitReached])
        #expect(statuses[1].message == "channel \(otherChannel.channelID) not found in server \(other.serverID)")
        #expect(statuses[3].message.contains("limit"))
        #expect(statuses[0].target.channelID == c1.channelID)
        let servers = try await bob.subscriptions.subscribeServer(SubscribeServerParam(subscribeType: .serverMsg, targets: [g.serverID, other.serverID, 5]))
        #expect(servers.map(\.status) == [.targetOk, .targetNotFound, .targetNotFound])
        #expect(servers[1].message == "server \(other.serverID) not found")
    }

    @Test func theLimitIsExactlyReachedThenOneMoreFailsCountingAllOfTheUsersSessions() async throws {
        let server = try largeServer { try $0.set("limit-channel-msg", "3") }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (phone, _) = try await server.client("bob", device: "phone")
        let (laptop, _) = try await server.client("bob", device: "laptop")
        let g = try await alice.servers.create(name: "G")
        _ = try await phone.servers.join(g.serverID)
        var channels: [UInt64] = []
        for i in 0..<4 { channels.append(try await alice.channels.create(in: g.serverID, name: "c\(i)").channelID) }
        #expect(try await phone.sub(.channelMsg, g.serverID, [channels[0], channels[1]]) == [.targetOk, .targetOk])
        #expect(try await laptop.sub(.channelMsg, g.serverID, [channels[2]]) == [.targetOk])
        #expect(try await laptop.sub(.channelMsg, g.serverID, [channels[3]]) == [.targetLimitReached])
        #expect(try await phone.sub(.channelMsg, g.serverID, [channels[3]]) == [.targetLimitReached])
        // A channel the user already holds on another session counts once.
        #expect(try await laptop.sub(.channelMsg, g.serverID, [channels[0]]) == [.targetOk])
        // Unsubscribing frees a place.
        #expect(try await phone.sub(.channelMsg, g.serverID, [channels[1]], .unsubscribe) == [.targetOk])
        #expect(try await laptop.sub(.channelMsg, g.serverID, [channels[3]]) == [.targetOk])
    }

    /// With several loops (or nodes) a user's channels sit on several homes;
    /// the limit still counts them all (the user's home keeps the count).
    @Test func theLimitCountsChannelsOnEveryHome() async throws {
        let server = try largeServer { try $0.set("limit-channel-msg", "4") }
        defer { server.stop() }
        let (bob, _) = try await server.client("bob")
        let (carol, _) = try await server.client("carol")
        var targets: [ChannelTarget] = []
        for i in 0..<10 {
            // A guild is made on the home of the loop its creator's connection is on: ten connections spread them.
            let (creator, _) = try await server.client("alice", device: "d\(i)")
            let g = try await creator.servers.create(name: "G\(i)")
            let c = try await creator.channels.create(in: g.serverID, name: "c")
            creator.close()
            for user in [bob, carol] { _ = try await user.servers.join(g.serverID) }
            targets.append(ChannelTarget(serverID: g.serverID, channelID: c.channelID))
        }
        // One request per server, each on the server's own home.
        var one: [GHTargetStatus] = []
        for t in targets { one += try await bob.sub(.channelMsg, t.serverID, [t.channelID]) }
        #expect(one == Array(repeating: .targetOk, count: 4) + Array(repeating: .targetLimitReached, count: 6))
        // One request across all of them: the first four in order fit.
        let all = try await carol.subscriptions.subscribeChannel(SubscribeChannelParam(subscribeType: .channelMsg, targets: targets)).map(\.status)
        #expect(all == Array(repeating: .targetOk, count: 4) + Array(repeating: .targetLimitReached, count: 6))
        // Holding one again counts once; giving one up frees its place for another home's channel.
        #expect(try await carol.sub(.channelMsg, targets[0].serverID, [targets[0].channelID]) == [.targetOk])
        #expect(try await carol.sub(.channelMsg, targets[1].serverID, [targets[1].channelID], .unsubscribe) == [.targetOk])
        #expect(try await carol.sub(.channelMsg, targets[9].serverID, [targets[9].channelID]) == [.targetOk])
        #expect(try await carol.sub(.channelMsg, targets[8].serverID, [targets[8].channelID]) == [.targetLimitReached])
    }

    @Test func theLastOfTheThreeChannelLevelsWins() async throws {
        let server = try largeServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        try await bob.sub(.channelMsg, g.serverID, [c.channelID])
        try await bob.sub(.channelUnreadCount, g.serverID, [c.channelID])
        let m = try await alice.messages.send("counted, not delivered", to: c.channelID)
        let changed = try await waitFor("an unread change") { bobEvents.unreads.first { $0.lastSeq == m.seq } }
        #expect(changed.unreadCount == 1)
        #expect(!bobEvents.messages.contains { $0.uid == m.uid })
        try await bob.sub(.channelMsg, g.serverID, [c.channelID])
        let next = try await alice.messages.send("delivered again", to: c.channelID)
        _ = try await bobEvents.message { $0.uid == next.uid }
    }

    @Test func typingIsIndependentOfTheChannelLevel() async throws {
        let server = try largeServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        try await bob.sub(.channelTyping, g.serverID, [c.channelID])
        try await bob.sub(.channelUnreadStatus, g.serverID, [c.channelID])
        try await bob.sub(.channelMsg, g.serverID, [c.channelID])
        try await alice.messages.sendTyping(c.channelID)
        let t = try await waitFor("typing") { bobEvents.typings.first }
        #expect(t.typers.map(\.userID) == ["alice"])
    }

    @Test func manualSubscribeInAutoModeFailsWith403AndTheExactMessageExceptTyping() async throws {
        let server = try largeServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (g, c) = try await guild(server, owner: alice, members: [])
        let (auto, _) = try await server.client("alice", device: "auto", auto: true)
        do {
            try await auto.sub(.channelMsg, g.serverID, [c.channelID])
            Issue.record("manual subscribe allowed in auto mode")
        } catch let e as GuildhallError {
            #expect(e.code == .forbidden)
            #expect(e.message == "manual subscribe is not allowed in auto subscribe mode")
        }
        await expectError(.forbidden) { _ = try await auto.subscriptions.subscribeServer(SubscribeServerParam(subscribeType: .serverMsg, operationType: .unsubscribe, targets: [g.serverID])) }
        #expect(try await auto.sub(.channelTyping, g.serverID, [c.channelID]) == [.targetOk])
        try await auto.subscriptions.setAutoSubscribe(false)
        #expect(try await auto.sub(.channelMsg, g.serverID, [c.channelID]) == [.targetOk])
    }

    @Test func autoModeFollowsMembershipAndTellsTheSessionEachType() async throws {
        let server = try largeServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (g, c) = try await guild(server, owner: alice, members: [])
        let (bob, bobEvents) = try await server.client("bob", auto: true)
        _ = try await bob.servers.join(g.serverID)
        let changed = try await waitFor("auto subscriptions for the joined server") {
            bobEvents.notifications.filter { $0.kind == .subscriptionChanged }.flatMap(\.subscriptions).first { $0.target.channelID == c.channelID }
        }
        #expect(changed.type == .channelMsg)
        #expect(bobEvents.notifications.flatMap(\.subscriptions).contains { $0.type == .serverMsg && $0.target.serverID == g.serverID })
        let m = try await alice.messages.send("auto delivered", to: c.channelID)
        _ = try await bobEvents.message { $0.uid == m.uid }
        try await bob.servers.leave(g.serverID)
        let dropped = try await waitFor("the channel dropped") {
            bobEvents.notifications.flatMap(\.subscriptions).first { $0.target.channelID == c.channelID && $0.type == .unspecified }
        }
        #expect(dropped.target.serverID == g.serverID)
    }

    @Test func autoModeGivesTheRichestTypeThatFitsByRecencyAndPromotesOnActivity() async throws {
        let server = try largeServer {
            try $0.set("limit-channel-msg", "1")
            try $0.set("limit-channel-unread-count", "1")
        }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let g = try await alice.servers.create(name: "G")
        var channels: [GHChannelInfo] = []
        for i in 0..<3 { channels.append(try await alice.channels.create(in: g.serverID, name: "c\(i)")) }
        let (auto, events) = try await server.client("alice", device: "auto", auto: true)
        let first = try await waitFor("the initial assignment") {
            events.notifications.first { $0.kind == .subscriptionChanged }
        }
        func type(_ n: GHSystemNotification, _ c: GHChannelInfo) -> GHSubscriptionType? {
            n.subscriptions.first { $0.target.channelID == c.channelID }?.type
        }
        // Newest channel first: c2 messages, c1 unread count, c0 unread status.
        #expect(type(first, channels[2]) == .channelMsg)
        #expect(type(first, channels[1]) == .channelUnreadCount)
        #expect(type(first, channels[0]) == .channelUnreadStatus)
        _ = try await auto.messages.send("activity in c0", to: channels[0].channelID)
        let promoted = try await waitFor("a promotion") {
            events.notifications.filter { $0.kind == .subscriptionChanged }.dropFirst().first
        }
        #expect(type(promoted, channels[0]) == .channelMsg)
        #expect(type(promoted, channels[2]) == .channelUnreadCount)
        #expect(type(promoted, channels[1]) == .channelUnreadStatus)
    }

    /// Seed 001: above its cap auto mode covers only the most recent
    /// channels; the login answer and each change say how many it left out.
    @Test func autoModePastItsCapSaysHowManyChannelsItCouldNotCover() async throws {
        let server = try largeServer { try $0.set("auto-subscribe-max-channels", "3") }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let g = try await alice.servers.create(name: "G")
        for i in 0..<5 { _ = try await alice.channels.create(in: g.serverID, name: "c\(i)") }
        let (_, events) = try await server.client("alice", device: "auto", auto: true)
        let first = try await waitFor("the initial assignment") { events.notifications.first { $0.kind == .subscriptionChanged } }
        #expect(first.autoUncovered == 2 && first.subscriptions.count == 4, "the server and three of five channels")
        _ = try await alice.channels.create(in: g.serverID, name: "c5")
        let later = try await waitFor("a change saying 3") {
            events.notifications.first { $0.kind == .subscriptionChanged && $0.autoUncovered == 3 }
        }
        #expect(later.autoUncovered == 3)
        var options = ClientOptions(token: server.token("alice", device: "second"))
        options.autoSubscribe = true
        let second = GuildhallClient(port: server.port, options: options)
        #expect(try await second.connect().autoUncovered == 3, "the login answer says what the server knows")
        second.close()
    }

    @Test func autoModeNeverIncludesTyping() async throws {
        let server = try largeServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (g, c) = try await guild(server, owner: alice, members: [])
        let (auto, events) = try await server.client("alice", device: "auto", auto: true)
        let assigned = try await waitFor("assignment") { events.notifications.first { $0.kind == .subscriptionChanged } }
        #expect(!assigned.subscriptions.contains { $0.type == .channelTyping })
        let (carol, _) = try await server.client("carol")
        _ = try await carol.servers.join(g.serverID)
        try await carol.messages.sendTyping(c.channelID)
        let sentinel = try await alice.messages.send("after the typing", to: c.channelID)
        _ = try await events.message { $0.uid == sentinel.uid }
        #expect(events.typings.isEmpty)
        _ = auto
    }
}
