// Joining, invitations, leaving, kicks, roles and the notifications each
// sends to the server's online members.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing

@Suite struct MembershipTests {
    /// The Directory changes only once a change is stored; changes to one
    /// server still decide one after another, each on what the one before
    /// left: of the same request sent many times at once, one succeeds.
    @Test func concurrentChangesToOneServerDecideOneAfterAnother() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let g = try await alice.servers.create(name: "Busy", openJoin: false)
        /// How many of `n` copies of a request, sent at once, succeed.
        func successes(_ n: Int, _ request: @escaping @Sendable (Int) async throws -> Void) async -> Int {
            await withTaskGroup(of: Bool.self) { group in
                for i in 0..<n { group.addTask { (try? await request(i)) != nil } }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
        }
        #expect(await successes(8) { _ in try await alice.servers.invite("bob", to: g.serverID) } == 1)
        #expect(await successes(8) { _ in _ = try await bob.servers.acceptInvite(g.serverID) } == 1)
        #expect(await successes(8) { n in
            _ = try await alice.roles.create(in: g.serverID, name: "r\(n)", position: 2, permissions: GHPermissionBits())
        } == 8)
        let ids = try await alice.roles.list(of: g.serverID).roles.map(\.roleID)
        #expect(Set(ids).count == ids.count && ids.count == 10, "each new role got its own id: \(ids)")
    }

    @Test func anInviteOnlyServerAdmitsOnlyInvitedUsers() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, aliceEvents) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let g = try await alice.servers.create(name: "Private", openJoin: false)
        // Uninvited, bob cannot tell it from a server that does not exist.
        await expectError(.notFound) { _ = try await bob.servers.join(g.serverID) }
        await expectError(.notFound) { _ = try await bob.servers.acceptInvite(g.serverID) }
        try await alice.servers.invite("bob", to: g.serverID)
        let invited = try await bobEvents.notification(.memberInvited)
        #expect(invited.serverID == g.serverID)
        #expect(invited.member.userID == "bob")
        #expect(invited.actorID == "alice")
        await expectError(.conflict) { try await alice.servers.invite("bob", to: g.serverID) }
        let member = try await bob.servers.acceptInvite(g.serverID)
        #expect(member.role == .member)
        let joined = try await aliceEvents.notification(.memberJoined)
        #expect(joined.member.userID == "bob")
        await expectError(.conflict) { _ = try await bob.servers.join(g.serverID) }
    }

    @Test func aKickedMemberIsToldAndStopsReceivingMessages() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (carol, carolEvents) = try await server.client("carol")
        let (g, channel) = try await guild(server, owner: alice, members: [bob, carol])
        await expectError(.forbidden) { try await bob.members.kick("carol", from: g.serverID) }
        try await alice.members.kick("bob", from: g.serverID)
        let kicked = try await bobEvents.notification(.memberKicked)
        #expect(kicked.member.userID == "bob")
        _ = try await carolEvents.notification(.memberKicked)
        let after = try await alice.messages.send("bob is gone", to: channel.channelID)
        _ = try await carolEvents.message { $0.uid == after.uid }
        #expect(!bobEvents.messages.contains { $0.uid == after.uid })
        await expectError(.notFound) { _ = try await bob.messages.send("let me in", to: channel.channelID) }
        await expectError(.notFound) { _ = try await bob.messages.history(of: channel.channelID) }
        #expect(try await bob.servers.mine().isEmpty)
    }

    @Test func leavingAndRolesFollowTheRules() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, aliceEvents) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (g, _) = try await guild(server, owner: alice, members: [bob])
        await expectError(.forbidden) { try await alice.servers.leave(g.serverID) }
        await expectError(.forbidden) { _ = try await bob.channels.create(in: g.serverID, name: "nope") }
        let admin = try await alice.members.setRole(.admin, of: "bob", in: g.serverID)
        #expect(admin.role == .admin)
        #expect(try await aliceEvents.notification(.memberRoleChanged).member.role == .admin)
        let c = try await bob.channels.create(in: g.serverID, name: "bobs")
        #expect(c.name == "bobs")
        await expectError(.forbidden) { _ = try await bob.members.setRole(.member, of: "alice", in: g.serverID) }
        try await bob.servers.leave(g.serverID)
        #expect(try await aliceEvents.notification(.memberLeft).member.userID == "bob")
        #expect(try await alice.members.list(of: g.serverID).map(\.userID) == ["alice"])
    }

    @Test func nonMembersSeeNotFoundForEverything() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (eve, _) = try await server.client("eve")
        let (g, channel) = try await guild(server, owner: alice, members: [])
        let sent = try await alice.messages.send("secret", to: channel.channelID)
        await expectError(.notFound) { _ = try await eve.channels.list(of: g.serverID) }
        await expectError(.notFound) { _ = try await eve.members.list(of: g.serverID) }
        await expectError(.notFound) { _ = try await eve.messages.send("hi", to: channel.channelID) }
        await expectError(.notFound) { _ = try await eve.messages.history(of: channel.channelID) }
        await expectError(.notFound) { _ = try await eve.servers.update(g.serverID, name: "mine") }
        await expectError(.notFound) { try await eve.servers.delete(g.serverID) }
        await expectError(.notFound) { try await eve.members.kick("alice", from: g.serverID) }
        await expectError(.notFound) { _ = try await eve.servers.join(424242) }
        #expect(try await eve.servers.get([g.serverID]).isEmpty)
        #expect(try await eve.messages.get([sent.uid]).isEmpty)
    }

    @Test func theOwnerHandsTheServerToAnotherMemberAndKeepsAdmin() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (carol, _) = try await server.client("carol")
        let (g, _) = try await guild(server, owner: alice, members: [bob, carol])
        await expectError(.badRequest) { _ = try await alice.servers.transferOwnership(g.serverID, to: "alice") }
        await expectError(.notFound) { _ = try await alice.servers.transferOwnership(g.serverID, to: "zed") }
        await expectError(.forbidden) { _ = try await bob.servers.transferOwnership(g.serverID, to: "bob") }
        await expectError(.notFound) { _ = try await (try await server.client("eve")).0.servers.transferOwnership(g.serverID, to: "eve") }

        let moved = try await alice.servers.transferOwnership(g.serverID, to: "bob")
        #expect(moved.ownerID == "bob")
        #expect(try await bobEvents.notification(.serverUpdated).server.ownerID == "bob")
        func roles() async throws -> [String: GHRole] {
            Dictionary(uniqueKeysWithValues: try await carol.members.list(of: g.serverID).map { ($0.userID, $0.role) })
        }
        #expect(try await roles() == ["alice": .admin, "bob": .owner, "carol": .member])
        // What only the owner may do is bob's now; alice, an admin, may not.
        await expectError(.forbidden) { try await alice.servers.delete(g.serverID) }
        await expectError(.forbidden) { _ = try await alice.servers.transferOwnership(g.serverID, to: "carol") }
        try server.restart()
        // Other devices: the first clients reconnect on their own, and a device's new session would replace theirs.
        let (bobAgain, _) = try await server.client("bob", device: "after")
        #expect(try await bobAgain.servers.get([g.serverID]).first?.ownerID == "bob", "stored")
        let (carolAgain, _) = try await server.client("carol", device: "after")
        #expect(try await carolAgain.members.list(of: g.serverID).first { $0.userID == "alice" }?.role == .admin)
        try await bobAgain.servers.delete(g.serverID)
    }

    @Test func serverAndChannelChangesAreNotifiedToOnlineMembers() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (g, channel) = try await guild(server, owner: alice, members: [bob])
        #expect(try await bobEvents.notification(.channelCreated).channel.channelID == channel.channelID)
        let renamed = try await alice.servers.update(g.serverID, name: "Renamed", custom: "{\"x\":1}")
        #expect(renamed.name == "Renamed" && renamed.memberCount == 2)
        #expect(try await bobEvents.notification(.serverUpdated).server.name == "Renamed")
        let topic = try await alice.channels.update(channel.channelID, topic: "news")
        #expect(topic.topic == "news" && topic.name == "general")
        #expect(try await bobEvents.notification(.channelUpdated).channel.topic == "news")
        try await alice.channels.delete(channel.channelID)
        #expect(try await bobEvents.notification(.channelDeleted).channelID == channel.channelID)
        #expect(try await bob.channels.list(of: g.serverID).isEmpty)
        try await alice.servers.delete(g.serverID)
        #expect(try await bobEvents.notification(.serverDeleted).serverID == g.serverID)
        #expect(try await bob.servers.mine().isEmpty)
        await expectError(.notFound) { _ = try await bob.members.list(of: g.serverID) }
    }
}
