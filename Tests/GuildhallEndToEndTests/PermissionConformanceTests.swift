// Roles, overrides and the permission check (docs/features.md), through the SDK.

import Foundation
import GuildhallClient
import GuildhallServer
import GuildhallWire
import Testing

@Suite struct PermissionConformanceTests {
    /// Each of the five levels, from `everyone` up to the member on the
    /// channel, overrides the ones below it; Inherit hands the word down.
    @Test func allowInheritDenyResolvesAtEachOfTheFiveLevels() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        let other = try await alice.channels.create(in: g.serverID, name: "other")
        func bobSends(_ channel: UInt64 = c.channelID) async -> Bool { (try? await bob.messages.send("hi", to: channel)) != nil }
        func bobMay(_ channel: UInt64 = c.channelID) async throws -> Bool {
            try await alice.roles.permissions(in: g.serverID, channel: channel, of: "bob").granted & GHPermission.sendMessages.bits != 0
        }

        #expect(await bobSends(), "everyone allows sending in a new server")
        _ = try await alice.roles.update(0, in: g.serverID, permissions: GHPermissionBits(allow: [.viewChannel]))
        #expect(await bobSends() == false, "1: nothing said on everyone means not allowed")
        let mods = try await alice.roles.create(in: g.serverID, name: "mods", position: 2, permissions: GHPermissionBits(allow: [.sendMessages]))
        _ = try await alice.roles.grant(mods.roleID, to: "bob", in: g.serverID)
        #expect(await bobSends(), "2: the member's role on the server beats everyone")
        _ = try await alice.roles.setOverride(in: g.serverID, user: "bob", GHPermissionBits(deny: [.sendMessages]))
        #expect(await bobSends() == false, "3: the member on the server beats the role on the server")
        _ = try await alice.roles.setOverride(in: g.serverID, channel: c.channelID, role: mods.roleID, GHPermissionBits(allow: [.sendMessages]))
        #expect(await bobSends(), "4: the role on the channel beats the member on the server")
        #expect(await bobSends(other.channelID) == false, "another channel keeps the server's levels")
        _ = try await alice.roles.setOverride(in: g.serverID, channel: c.channelID, user: "bob", GHPermissionBits(deny: [.sendMessages]))
        #expect(await bobSends() == false, "5: the member on the channel beats everything")
        #expect(try await bobMay() == false)
        _ = try await alice.roles.setOverride(in: g.serverID, channel: c.channelID, user: "bob", GHPermissionBits())
        #expect(await bobSends(), "Inherit on every bit removes the override")
        #expect(try await bobMay())
        do {
            _ = try await bob.messages.send("no", to: other.channelID)
            Issue.record("sent without the bit")
        } catch let e as GuildhallError {
            #expect(e.code == .forbidden && e.message == "you need the send messages permission in channel \(other.channelID)")
        }
        let listed = try await bob.roles.list(of: g.serverID)
        #expect(listed.roles.map(\.name) == ["mods", "admin", "everyone"])
        #expect(listed.overrides.map(\.channelID) == [0, c.channelID])
    }

    /// A member who can no longer view a channel stops receiving it at once:
    /// subscribers are told their subscription went, and small servers' members stop getting it too.
    @Test(arguments: [true, false])
    func losingViewAccessStopsDeliveryAtOnce(largeServerMode: Bool) async throws {
        let server = try largeServerMode ? largeServer() : TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, heard) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        let sentinel = try await alice.channels.create(in: g.serverID, name: "sentinel")
        if largeServerMode { #expect(try await bob.sub(.channelMsg, g.serverID, [c.channelID, sentinel.channelID]) == [.targetOk, .targetOk]) }
        let before = try await alice.messages.send("before", to: c.channelID)
        _ = try await heard.message { $0.uid == before.uid }

        _ = try await alice.roles.setOverride(in: g.serverID, channel: c.channelID, user: "bob", GHPermissionBits(deny: [.viewChannel]))
        let hidden = try await alice.messages.send("after", to: c.channelID)
        let mark = try await alice.messages.send("sentinel", to: sentinel.channelID)
        _ = try await heard.message { $0.uid == mark.uid }
        #expect(!heard.messages.contains { $0.uid == hidden.uid })
        if largeServerMode {
            let told = heard.notifications.first { $0.kind == .subscriptionChanged }
            #expect(told?.subscriptions.map(\.target.channelID) == [c.channelID])
            #expect(told?.subscriptions.first?.type == .unspecified)
        }
        await expectError(.notFound) { _ = try await bob.messages.history(of: c.channelID) }
        #expect(try await bob.sub(.channelMsg, g.serverID, [c.channelID]) == [.targetNotFound])
        #expect(try await bob.channels.list(of: g.serverID).map(\.channelID) == [sentinel.channelID])
        await expectError(.notFound) { _ = try await bob.messages.send("in the dark", to: c.channelID) }

        // Given back, the channel is there again.
        _ = try await alice.roles.setOverride(in: g.serverID, channel: c.channelID, user: "bob", GHPermissionBits())
        #expect(try await bob.messages.history(of: c.channelID).messages.map(\.uid) == [before.uid, hidden.uid])
    }

    @Test func roleAndPermissionChangesAreBroadcastAsServerNotifications() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (carol, heard) = try await server.client("carol")
        let (g, c) = try await guild(server, owner: alice, members: [bob, carol])
        let role = try await alice.roles.create(in: g.serverID, name: "mods", position: 2, permissions: GHPermissionBits(allow: [.kick]))
        #expect(try await heard.notification(.roleCreated).role == role)
        let renamed = try await alice.roles.update(role.roleID, in: g.serverID, name: "moderators")
        #expect(try await heard.notification(.roleUpdated).role.name == "moderators")
        #expect(renamed.permissions.allow == GHPermission.kick.bits)
        _ = try await alice.roles.grant(role.roleID, to: "bob", in: g.serverID)
        let changed = try await heard.notification(.memberRoleChanged)
        #expect(changed.member.userID == "bob" && changed.member.roleIds == [role.roleID])
        let o = try await alice.roles.setOverride(in: g.serverID, channel: c.channelID, role: role.roleID, GHPermissionBits(deny: [.mention]))
        let n = try await heard.notification(.overrideChanged)
        #expect(n.override == o && n.channelID == c.channelID)
        try await alice.roles.delete(role.roleID, in: g.serverID)
        #expect(try await heard.notification(.roleDeleted).role.roleID == role.roleID)
        #expect(try await alice.members.list(of: g.serverID).first { $0.userID == "bob" }?.roleIds == [])
        #expect(try await alice.roles.list(of: g.serverID).overrides.isEmpty)
    }

    @Test func mentionsAndMentioningEveryoneNeedTheirBits() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        _ = try await bob.messages.send("hi @alice", to: c.channelID, mentions: ["alice"])
        await expectError(.forbidden) { _ = try await bob.messages.send("@everyone", to: c.channelID, mentionAll: true) }
        _ = try await alice.members.setRole(.admin, of: "bob", in: g.serverID)
        _ = try await bob.messages.send("@everyone", to: c.channelID, mentionAll: true)
        _ = try await alice.roles.setOverride(in: g.serverID, channel: c.channelID, role: 0, GHPermissionBits(deny: [.mention]))
        await expectError(.forbidden) { _ = try await bob.messages.send("hi @alice", to: c.channelID, mentions: ["alice"]) }
        _ = try await bob.messages.send("plain words still go", to: c.channelID)
        _ = try await alice.messages.send("the owner may do anything", to: c.channelID, mentions: ["bob"], mentionAll: true)
    }

    /// Roles are changed only with MANAGE_ROLES, and only below one's highest role.
    @Test func managingRolesNeedsTheBitAndARankAboveTheRole() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (carol, _) = try await server.client("carol")
        let (dave, _) = try await server.client("dave")
        let (g, _) = try await guild(server, owner: alice, members: [bob, carol])
        _ = try await alice.members.setRole(.admin, of: "bob", in: g.serverID)
        await expectError(.forbidden) { _ = try await bob.roles.create(in: g.serverID, name: "x", position: 1, permissions: GHPermissionBits()) }
        _ = try await alice.members.setRole(.member, of: "bob", in: g.serverID)
        let managers = try await alice.roles.create(in: g.serverID, name: "managers", position: 5, permissions: GHPermissionBits(allow: [.manageRoles]))
        _ = try await alice.roles.grant(managers.roleID, to: "bob", in: g.serverID)
        let helpers = try await bob.roles.create(in: g.serverID, name: "helpers", position: 4, permissions: GHPermissionBits())
        _ = try await bob.roles.grant(helpers.roleID, to: "carol", in: g.serverID)
        await expectError(.forbidden) { _ = try await bob.roles.grant(managers.roleID, to: "carol", in: g.serverID) }
        await expectError(.forbidden) { _ = try await bob.roles.update(helpers.roleID, in: g.serverID, permissions: GHPermissionBits(allow: [.ban])) }
        await expectError(.forbidden) { _ = try await carol.roles.grant(helpers.roleID, to: "carol", in: g.serverID) }
        // Outsiders are answered as for a server that does not exist.
        await expectError(.notFound) { _ = try await dave.roles.list(of: g.serverID) }
        await expectError(.notFound) { _ = try await dave.roles.create(in: g.serverID, name: "x", position: 1, permissions: GHPermissionBits()) }
        await expectError(.notFound) { _ = try await alice.roles.grant(99, to: "carol", in: g.serverID) }
        await expectError(.badRequest) {
            _ = try await alice.roles.create(in: g.serverID, name: "odd", position: 1,
                                             permissions: GHPermissionBits(allow: [.kick], deny: [.kick]))
        }
    }

    @Test func rolesAndOverridesSurviveARestart() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        let role = try await alice.roles.create(in: g.serverID, name: "quiet", position: 2, permissions: GHPermissionBits(deny: [.sendMessages]))
        _ = try await alice.roles.grant(role.roleID, to: "bob", in: g.serverID)
        _ = try await alice.roles.setOverride(in: g.serverID, channel: c.channelID, user: "bob", GHPermissionBits(allow: [.mentionEveryone]))
        let before = try await alice.roles.list(of: g.serverID)
        let granted = try await alice.roles.permissions(in: g.serverID, channel: c.channelID, of: "bob").granted
        try server.restart()
        let (alice2, _) = try await server.client("alice", device: "d2")
        #expect(try await alice2.roles.list(of: g.serverID) == before)
        #expect(try await alice2.roles.permissions(in: g.serverID, channel: c.channelID, of: "bob").granted == granted)
        let (bob2, _) = try await server.client("bob", device: "d2")
        await expectError(.forbidden) { _ = try await bob2.messages.send("shh", to: c.channelID) }
    }
}
