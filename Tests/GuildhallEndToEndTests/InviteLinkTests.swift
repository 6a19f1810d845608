// Invite links (docs/features.md "Invite links") through the SDK: a code made
// and looked up before joining, joins counted to the limit, expiry, revoking,
// bans holding, the permission bit, who lists what, a restart, and bad input.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct InviteLinkTests {
    @Test func aCodeIsLookedUpThenJoinedByAndLandsInItsChannel() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, aliceEvents) = try await server.client("alice")
        let g = try await alice.servers.create(name: "Invite-only", icon: "🏰", openJoin: false)
        let lobby = try await alice.channels.create(in: g.serverID, name: "lobby")
        let welcome = try await alice.channels.create(in: g.serverID, name: "welcome")
        let code = try await alice.invites.create(in: g.serverID, channel: welcome.channelID, maxUses: 2)
        #expect(code.code.count == 8 && code.channelID == welcome.channelID && code.serverName == "Invite-only" && code.maxUses == 2)
        let first = try await alice.invites.create(in: g.serverID)
        #expect(first.channelID == lobby.channelID, "0 lands in the first channel")

        let (bob, _) = try await server.client("bob")
        await expectError(.notFound) { _ = try await bob.servers.join(g.serverID) }  // invite-only: it does not show itself
        let preview = try await bob.invites.lookUp(code.code)
        #expect(preview.serverName == "Invite-only" && preview.serverIcon == "🏰" && preview.memberCount == 1 && preview.channelName == "welcome")
        let landed = try await bob.invites.join(code.code)
        #expect(landed.channelID == welcome.channelID && landed.uses == 1 && landed.memberCount == 2)
        _ = try await aliceEvents.notification(.memberJoined)
        #expect(try await bob.servers.mine().map(\.serverID) == [g.serverID])
        await expectError(.conflict) { _ = try await bob.invites.join(code.code) }

        // The second use is the last: the code is gone after it.
        let (carol, _) = try await server.client("carol")
        #expect(try await carol.invites.join(code.code).uses == 2)
        let (dave, _) = try await server.client("dave")
        await expectError(.notFound) { _ = try await dave.invites.lookUp(code.code) }
        await expectError(.notFound) { _ = try await dave.invites.join(code.code) }
        #expect(try await alice.invites.list(of: g.serverID).map(\.code) == [first.code])
    }

    @Test func expiredRevokedAndBannedAreRefusedAndTheBitIsNeeded() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let g = try await alice.servers.create(name: "G")
        _ = try await alice.channels.create(in: g.serverID, name: "general")
        let (bob, _) = try await server.client("bob")
        _ = try await bob.servers.join(g.serverID)
        let (eve, _) = try await server.client("eve")

        let short = try await alice.invites.create(in: g.serverID, maxAgeSeconds: 60)
        server.clock.advance(ms: 61_000)
        await expectError(.notFound) { _ = try await eve.invites.lookUp(short.code) }

        // bob (everyone holds CREATE_INVITES) makes one; he sees his own, alice (MANAGE_SERVER) sees all.
        let bobs = try await bob.invites.create(in: g.serverID)
        let alices = try await alice.invites.create(in: g.serverID)
        #expect(try await bob.invites.list(of: g.serverID).map(\.code) == [bobs.code])
        #expect(Set(try await alice.invites.list(of: g.serverID).map(\.code)) == [bobs.code, alices.code])
        await expectError(.forbidden) { try await bob.invites.revoke(alices.code) }
        try await alice.invites.revoke(bobs.code)
        await expectError(.notFound) { _ = try await eve.invites.join(bobs.code) }
        await expectError(.notFound) { try await eve.invites.revoke(alices.code) }

        // A ban holds against a code.
        try await alice.members.ban("eve", from: g.serverID)
        await expectError(.forbidden) { _ = try await eve.invites.join(alices.code) }

        // Without CREATE_INVITES (taken from everyone), bob may not make one.
        _ = try await alice.roles.update(0, in: g.serverID, permissions: GHPermissionBits(allow: [.viewChannel, .sendMessages]))
        await expectError(.forbidden) { _ = try await bob.invites.create(in: g.serverID) }
        await expectError(.notFound) { _ = try await eve.invites.create(in: g.serverID) }
    }

    @Test func codesSurviveARestartWithTheirUses() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let g = try await alice.servers.create(name: "Kept", openJoin: false)
        _ = try await alice.channels.create(in: g.serverID, name: "general")
        let code = try await alice.invites.create(in: g.serverID, maxUses: 2)
        let (bob, _) = try await server.client("bob")
        _ = try await bob.invites.join(code.code)
        try server.restart()
        let (carol, _) = try await server.client("carol", device: "after")
        #expect(try await carol.invites.lookUp(code.code).uses == 1)
        _ = try await carol.invites.join(code.code)
        let (dave, _) = try await server.client("dave", device: "after")
        await expectError(.notFound) { _ = try await dave.invites.join(code.code) }
    }

    @Test func badInviteRequestsAreRefused() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let g = try await alice.servers.create(name: "G")
        await expectError(.badRequest) { _ = try await alice.invites.create(in: g.serverID) }  // no channel to land in
        let c = try await alice.channels.create(in: g.serverID, name: "general")
        await expectError(.badRequest) { _ = try await alice.invites.create(in: g.serverID, maxAgeSeconds: 366 * 86_400) }
        await expectError(.notFound) { _ = try await alice.invites.create(in: g.serverID, channel: c.channelID + 1) }
        for bad in ["", "short", "waytoolongforacode", "ABCDEF0O"] {
            await expectError(.notFound) { _ = try await alice.invites.lookUp(bad) }
            await expectError(.notFound) { _ = try await alice.invites.join(bad) }
        }
    }
}
