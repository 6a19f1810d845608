// README "What clients receive" and docs/features.md (guests, bans), one test per rule.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct GuestConformanceTests {
    /// alice owns a guest-friendly server with a visible and an invisible channel.
    func setUp(_ server: TestServer) async throws -> (GuildhallClient, GHServerInfo, GHChannelInfo, GHChannelInfo) {
        let (alice, _) = try await server.client("alice")
        let g = try await alice.servers.create(name: "Public", openJoin: true)
        _ = try await alice.servers.update(g.serverID, allowGuests: true)
        let visible = try await alice.channels.create(in: g.serverID, name: "lobby")
        let staff = try await alice.channels.create(in: g.serverID, name: "staff")
        let hidden = try await alice.channels.update(staff.channelID, guestVisibility: .invisible)
        #expect(hidden.guestVisibility == .invisible)
        return (alice, g, visible, hidden)
    }

    @Test func aGuestEntersOnlyAServerThatAllowsGuestsAndIsNotBannedFromIt() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, g, _, _) = try await setUp(server)
        let (eve, _) = try await server.client("eve")
        let closed = try await alice.servers.create(name: "Closed")
        await expectError(.forbidden) { try await eve.servers.enterAsGuest(closed.serverID) }
        await expectError(.conflict) { try await alice.servers.enterAsGuest(g.serverID) }
        try await alice.members.ban("mallory", from: g.serverID)
        let (mallory, _) = try await server.client("mallory")
        await expectError(.forbidden) { try await mallory.servers.enterAsGuest(g.serverID) }
        await expectError(.forbidden) { _ = try await mallory.servers.join(g.serverID) }
        await expectError(.forbidden) { try await alice.servers.invite("mallory", to: g.serverID) }
        try await alice.members.unban("mallory", from: g.serverID)
        try await mallory.servers.enterAsGuest(g.serverID)
        #expect(try await eve.servers.enterAsGuest(g.serverID).serverID == g.serverID)
    }

    @Test func banningAMemberRemovesThemAndKeepsThemOut() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, g, visible, _) = try await setUp(server)
        let (bob, bobEvents) = try await server.client("bob")
        _ = try await bob.servers.join(g.serverID)
        try await alice.members.ban("bob", from: g.serverID)
        #expect(try await bobEvents.notification(.memberBanned).member.userID == "bob")
        await expectError(.notFound) { _ = try await bob.messages.send("hi", to: visible.channelID) }
        await expectError(.forbidden) { _ = try await bob.servers.join(g.serverID) }
        #expect(try await alice.members.list(of: g.serverID).map(\.userID) == ["alice"])
    }

    @Test func guestSubscriptionsNeedAGuestEntryAndHaveTheirOwnLimitsAndLists() async throws {
        let server = try TestServer { try $0.set("limit-guest-channel", "1") }
        defer { server.stop() }
        let (alice, g, visible, hidden) = try await setUp(server)
        let second = try await alice.channels.create(in: g.serverID, name: "second")
        let (eve, _) = try await server.client("eve")
        #expect(try await eve.sub(.guestChannel, g.serverID, [visible.channelID]) == [.targetNotMember])
        try await eve.servers.enterAsGuest(g.serverID)
        #expect(try await eve.sub(.guestChannel, g.serverID, [hidden.channelID, visible.channelID, second.channelID])
            == [.targetNotFound, .targetOk, .targetLimitReached])
        #expect(try await eve.subscriptions.subscribeServer(SubscribeServerParam(subscribeType: .guestServer, targets: [g.serverID])).map(\.status) == [.targetOk])
        // Member types are not for guests, and guest types not for members.
        #expect(try await eve.sub(.channelMsg, g.serverID, [visible.channelID]) == [.targetNotMember])
        #expect(try await alice.sub(.guestChannel, g.serverID, [visible.channelID]) == [.targetNotMember])
    }

    @Test func aGuestReceivesVisibleSubscribedChannelsAndPublicNotificationsOnly() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, g, visible, hidden) = try await setUp(server)
        let (eve, eveEvents) = try await server.client("eve")
        try await eve.servers.enterAsGuest(g.serverID)
        try await eve.sub(.guestChannel, g.serverID, [visible.channelID])
        _ = try await eve.subscriptions.subscribeServer(SubscribeServerParam(subscribeType: .guestServer, targets: [g.serverID]))
        let secret = try await alice.messages.send("staff only", to: hidden.channelID)
        let (bob, _) = try await server.client("bob")
        _ = try await bob.servers.join(g.serverID)
        let open = try await alice.messages.send("welcome", to: visible.channelID)
        let got = try await eveEvents.message { $0.uid == open.uid }
        #expect(got.body.text == "welcome")
        #expect(eveEvents.messageUnread.withLock { $0[open.uid] } == nil, "guests have no unread counts")
        _ = try await alice.servers.update(g.serverID, name: "Public 2")
        _ = try await eveEvents.notification(.serverUpdated)
        #expect(!eveEvents.messages.contains { $0.uid == secret.uid })
        #expect(!eveEvents.notifications.contains { $0.kind == .memberJoined })
    }

    @Test func guestsHaveNoExemptionsEvenInASmallServer() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, g, visible, _) = try await setUp(server)
        let (eve, eveEvents) = try await server.client("eve")
        try await eve.servers.enterAsGuest(g.serverID)
        let unsubscribed = try await alice.messages.send("@eve", to: visible.channelID, mentions: ["eve"])
        try await eve.sub(.guestChannel, g.serverID, [visible.channelID])
        let sentinel = try await alice.messages.send("now subscribed", to: visible.channelID)
        _ = try await eveEvents.message { $0.uid == sentinel.uid }
        #expect(!eveEvents.messages.contains { $0.uid == unsubscribed.uid })
    }

    @Test func aGuestsSendIsRefusedWith403AndNothingIsStoredOrFannedOut() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, g, visible, _) = try await setUp(server)
        let (bob, bobEvents) = try await server.client("bob")
        _ = try await bob.servers.join(g.serverID)
        let (eve, _) = try await server.client("eve")
        try await eve.servers.enterAsGuest(g.serverID)
        await expectError(.forbidden) { _ = try await eve.messages.send("let me talk", to: visible.channelID) }
        await expectError(.forbidden) { _ = try await eve.messages.markRead(visible.channelID) }
        let sentinel = try await alice.messages.send("members talk", to: visible.channelID)
        _ = try await bobEvents.message { $0.uid == sentinel.uid }
        #expect(!bobEvents.messages.contains { $0.senderID == "eve" })
        #expect(try await alice.messages.history(of: visible.channelID).messages.map(\.senderID) == ["alice"])
    }

    @Test func aGuestReadsTheHistoryOfVisibleChannelsOnly() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, g, visible, hidden) = try await setUp(server)
        _ = try await alice.messages.send("public history", to: visible.channelID)
        let staff = try await alice.messages.send("staff history", to: hidden.channelID)
        let (eve, _) = try await server.client("eve")
        await expectError(.notFound) { _ = try await eve.messages.history(of: visible.channelID) }
        try await eve.servers.enterAsGuest(g.serverID)
        #expect(try await eve.messages.history(of: visible.channelID).messages.map(\.body.text) == ["public history"])
        await expectError(.notFound) { _ = try await eve.messages.history(of: hidden.channelID) }
        #expect(try await eve.messages.get([staff.uid]).isEmpty)
    }

    @Test func membersAreToldWhenGuestsEnterAndLeave() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, g, _, _) = try await setUp(server)
        let events = Recorder()
        alice.addListener(events)
        let (eve, _) = try await server.client("eve")
        try await eve.servers.enterAsGuest(g.serverID)
        #expect(try await events.notification(.guestEntered).member.userID == "eve")
        try await eve.servers.leaveAsGuest(g.serverID)
        #expect(try await events.notification(.guestLeft).member.userID == "eve")
    }

    @Test func leavingAsAGuestDropsTheGuestSubscriptions() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, g, visible, _) = try await setUp(server)
        let (eve, eveEvents) = try await server.client("eve")
        try await eve.servers.enterAsGuest(g.serverID)
        try await eve.sub(.guestChannel, g.serverID, [visible.channelID])
        try await eve.servers.leaveAsGuest(g.serverID)
        let gone = try await alice.messages.send("after she left", to: visible.channelID)
        try await eve.servers.enterAsGuest(g.serverID)
        try await eve.sub(.guestChannel, g.serverID, [visible.channelID])
        let back = try await alice.messages.send("she is back", to: visible.channelID)
        _ = try await eveEvents.message { $0.uid == back.uid }
        #expect(!eveEvents.messages.contains { $0.uid == gone.uid })
    }

    @Test func theSDKEntersAndSubscribesAgainAfterAReconnect() async throws {
        let server = try largeServer()
        defer { server.stop() }
        let (alice, g, visible, _) = try await setUp(server)
        let (bob, bobEvents) = try await server.client("bob")
        _ = try await bob.servers.join(g.serverID)
        try await bob.sub(.channelMsg, g.serverID, [visible.channelID])
        let (eve, eveEvents) = try await server.client("eve")
        try await eve.servers.enterAsGuest(g.serverID)
        try await eve.sub(.guestChannel, g.serverID, [visible.channelID])
        try server.restart()
        // The SDK backs off up to 5 s between attempts: a slow restart (a loaded machine) costs one more.
        _ = try await waitFor("both to reconnect and replay", timeout: 30) { eveEvents.connectedCount >= 2 && bobEvents.connectedCount >= 2 ? true : nil }
        let (alice2, _) = try await server.client("alice", device: "after-restart")
        let m = try await alice2.messages.send("after the restart", to: visible.channelID)
        _ = try await eveEvents.message { $0.uid == m.uid }
        _ = try await bobEvents.message { $0.uid == m.uid }
        _ = alice
    }
}
