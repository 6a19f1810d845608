// README "What clients receive", one test per rule: small servers, mentions, targeted
// notifications, typing never exempt, each session once, live threshold.
// "Not received" is checked after a later event that the same session does
// receive: a session's events arrive in order.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct ExemptionConformanceTests {
    @Test func aLargeServerDeliversMessagesOnlyToSubscribers() async throws {
        let server = try largeServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (carol, carolEvents) = try await server.client("carol")
        let (g, c) = try await guild(server, owner: alice, members: [bob, carol])
        try await carol.sub(.channelMsg, g.serverID, [c.channelID])
        let m = try await alice.messages.send("subscribers only", to: c.channelID)
        _ = try await carolEvents.message { $0.uid == m.uid }
        let sentinel = try await alice.messages.send("for bob", to: c.channelID, mentions: ["bob"])
        _ = try await bobEvents.message { $0.uid == sentinel.uid }
        #expect(!bobEvents.messages.contains { $0.uid == m.uid })
        _ = bob
    }

    @Test func aMentionedMemberWithoutASubscriptionReceivesTheMessage() async throws {
        let server = try largeServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        let m = try await alice.messages.send("@bob look", to: c.channelID, mentions: ["bob"])
        let got = try await bobEvents.message { $0.uid == m.uid }
        #expect(got.mentions == ["bob"])
        let unread = try #require(bobEvents.messageUnread.withLock { $0[m.uid] })
        #expect(unread.mentionedCount == 1 && unread.unreadCount == 1)
    }

    @Test func mentionAllIsNotAnExemptionInALargeServer() async throws {
        let server = try largeServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        let all = try await alice.messages.send("@everyone", to: c.channelID, mentionAll: true)
        let sentinel = try await alice.messages.send("@bob", to: c.channelID, mentions: ["bob"])
        _ = try await bobEvents.message { $0.uid == sentinel.uid }
        #expect(!bobEvents.messages.contains { $0.uid == all.uid })
    }

    @Test func aSmallServerDeliversEverythingToEveryOnlineMemberWithoutSubscriptions() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        let m = try await alice.messages.send("small server", to: c.channelID)
        _ = try await bobEvents.message { $0.uid == m.uid }
        _ = try await alice.servers.update(g.serverID, name: "renamed")
        _ = try await bobEvents.notification(.serverUpdated)
    }

    @Test func typingIsNeverExemptEvenInASmallServer() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        try await alice.messages.sendTyping(c.channelID)
        let sentinel = try await alice.messages.send("after typing", to: c.channelID)
        _ = try await bobEvents.message { $0.uid == sentinel.uid }
        #expect(bobEvents.typings.isEmpty)
    }

    @Test func targetedNotificationsReachUsersWithoutASubscription() async throws {
        let server = try largeServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (carol, carolEvents) = try await server.client("carol")
        let (g, _) = try await guild(server, owner: alice, members: [bob])
        try await alice.servers.invite("carol", to: g.serverID)
        #expect(try await carolEvents.notification(.memberInvited).member.userID == "carol")
        _ = try await alice.members.setRole(.admin, of: "bob", in: g.serverID)
        #expect(try await bobEvents.notification(.memberRoleChanged).member.role == .admin)
        try await alice.members.kick("bob", from: g.serverID)
        #expect(try await bobEvents.notification(.memberKicked).member.userID == "bob")
        _ = carol
    }

    @Test func serverNotificationsInALargeServerNeedAServerSubscription() async throws {
        let server = try largeServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (carol, carolEvents) = try await server.client("carol")
        let (g, c) = try await guild(server, owner: alice, members: [bob, carol])
        _ = try await carol.subscriptions.subscribeServer(SubscribeServerParam(subscribeType: .serverMsg, targets: [g.serverID]))
        try await bob.sub(.channelUnreadStatus, g.serverID, [c.channelID])
        _ = try await alice.servers.update(g.serverID, name: "renamed")
        _ = try await carolEvents.notification(.serverUpdated)
        // A channel notification reaches the channel's subscribers at any level.
        _ = try await alice.channels.update(c.channelID, topic: "t")
        _ = try await bobEvents.notification(.channelUpdated)
        _ = try await carolEvents.notification(.channelUpdated)
        #expect(!bobEvents.notifications.contains { $0.kind == .serverUpdated })
    }

    @Test func eachSessionReceivesEachMessageOnceHoweverManyRulesSelectIt() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        try await bob.sub(.channelMsg, g.serverID, [c.channelID])
        // Small server, subscribed and mentioned: three reasons, one delivery.
        let m = try await alice.messages.send("@bob", to: c.channelID, mentions: ["bob", "bob"])
        let sentinel = try await alice.messages.send("next", to: c.channelID)
        _ = try await bobEvents.message { $0.uid == sentinel.uid }
        #expect(bobEvents.messages.filter { $0.uid == m.uid }.count == 1)
    }

    @Test func crossingTheThresholdSwitchesDeliveryAtOnceInBothDirections() async throws {
        let server = try TestServer { try $0.set("small-server-threshold", "3") }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (carol, _) = try await server.client("carol")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        let small = try await alice.messages.send("two members: small", to: c.channelID)
        _ = try await bobEvents.message { $0.uid == small.uid }
        _ = try await carol.servers.join(g.serverID)
        let large = try await alice.messages.send("three members: large", to: c.channelID)
        let mention = try await alice.messages.send("@bob", to: c.channelID, mentions: ["bob"])
        _ = try await bobEvents.message { $0.uid == mention.uid }
        #expect(!bobEvents.messages.contains { $0.uid == large.uid })
        try await carol.servers.leave(g.serverID)
        let smallAgain = try await alice.messages.send("two again", to: c.channelID)
        _ = try await bobEvents.message { $0.uid == smallAgain.uid }
    }

    @Test func withALowMarkALargeServerTurnsSmallOnlyBelowIt() async throws {
        let server = try TestServer {
            try $0.set("small-server-threshold", "4")
            try $0.set("small-server-low-mark", "3")
        }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (carol, _) = try await server.client("carol")
        let (dave, _) = try await server.client("dave")
        let (g, c) = try await guild(server, owner: alice, members: [bob, carol])
        /// Whether bob, who subscribed nothing, receives a message sent now.
        func bobReceives(_ text: String) async throws -> Bool {
            let m = try await alice.messages.send(text, to: c.channelID)
            let mention = try await alice.messages.send("@bob", to: c.channelID, mentions: ["bob"])
            _ = try await bobEvents.message { $0.uid == mention.uid }
            return bobEvents.messages.contains { $0.uid == m.uid }
        }
        #expect(try await bobReceives("three members, below the threshold: small"))
        _ = try await dave.servers.join(g.serverID)
        #expect(try await !bobReceives("four members: large"))
        try await dave.servers.leave(g.serverID)
        #expect(try await !bobReceives("three again, not below the low mark: still large"))
        try await carol.servers.leave(g.serverID)
        #expect(try await bobReceives("two, below the low mark: small again"))
        _ = try await carol.servers.join(g.serverID)
        #expect(try await bobReceives("three, grown from small: small until the threshold"))
    }

    @Test func aServerTurnedSmallAgainCountsUnreadFromPositionsMovedWhileItWasLarge() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        try server.update { try $0.set("small-server-threshold", "2") }
        _ = try await alice.messages.send("while large", to: c.channelID)
        for i in 1...3 { _ = try await bob.messages.send("bob \(i)", to: c.channelID) }
        try server.update { try $0.set("small-server-threshold", "2000") }
        let m = try await alice.messages.send("small again", to: c.channelID)
        _ = try await bobEvents.message { $0.uid == m.uid }
        let unread = try #require(bobEvents.messageUnread.withLock { $0[m.uid] })
        #expect(unread.readSeq == 4 && unread.unreadCount == 1, "bob read up to his own last message while the server was large")
    }

    @Test func aLiveThresholdChangeAppliesFromTheNextMessage() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        let before = try await alice.messages.send("default threshold: small", to: c.channelID)
        _ = try await bobEvents.message { $0.uid == before.uid }
        try server.update { try $0.set("small-server-threshold", "2") }
        let large = try await alice.messages.send("threshold 2: large", to: c.channelID)
        let mention = try await alice.messages.send("@bob", to: c.channelID, mentions: ["bob"])
        _ = try await bobEvents.message { $0.uid == mention.uid }
        #expect(!bobEvents.messages.contains { $0.uid == large.uid })
        try server.update { try $0.set("small-server-threshold", "2000") }
        let smallAgain = try await alice.messages.send("threshold 2000: small", to: c.channelID)
        _ = try await bobEvents.message { $0.uid == smallAgain.uid }
    }
}
