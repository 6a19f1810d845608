// Moderation (docs/features.md "Moderation") through the SDK: timeouts stop
// sending, reacting and typing until they end and are told to everyone;
// bans with an end lift themselves; slow mode answers 429 with when to try
// again, except for those who manage the channel or bypass it; all of it
// survives a restart.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct ModerationTests {
    func setUp(_ server: TestServer) async throws -> (GuildhallClient, GuildhallClient, Recorder, GHServerInfo, GHChannelInfo) {
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        return (alice, bob, bobEvents, g, c)
    }

    @Test func aTimedOutMemberCannotSendReactOrTypeUntilItEnds() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, bob, bobEvents, g, c) = try await setUp(server)
        let m = try await alice.messages.send("hello", to: c.channelID)
        let now = server.clock.now()
        let member = try await alice.members.timeout("bob", in: g.serverID, until: now + 60_000)
        #expect(member.timeoutUntil == now + 60_000)
        let told = try await bobEvents.notification(.memberTimedOut)
        #expect(told.member.userID == "bob" && told.member.timeoutUntil == now + 60_000)
        await expectError(.forbidden) { _ = try await bob.messages.send("let me speak", to: c.channelID) }
        await expectError(.forbidden) { _ = try await bob.messages.react(m.uid, in: c.channelID, type: 1) }
        await expectError(.forbidden) { try await bob.messages.sendTyping(c.channelID) }
        #expect(try await alice.members.page(of: g.serverID).members.first { $0.userID == "bob" }?.timeoutUntil == now + 60_000)
        // It holds across a restart, then ends by itself.
        try server.restart()
        let (bobAgain, _) = try await server.client("bob", device: "after")
        await expectError(.forbidden) { _ = try await bobAgain.messages.send("still?", to: c.channelID) }
        server.clock.advance(ms: 61_000)
        _ = try await bobAgain.messages.send("free again", to: c.channelID)
        // Lifted early with 0.
        let (owner, _) = try await server.client("alice", device: "after")
        _ = try await owner.members.timeout("bob", in: g.serverID, until: server.clock.now() + 60_000)
        await expectError(.forbidden) { _ = try await bobAgain.messages.send("again?", to: c.channelID) }
        #expect(try await owner.members.timeout("bob", in: g.serverID, until: 0).timeoutUntil == 0)
        _ = try await bobAgain.messages.send("thanks", to: c.channelID)
    }

    @Test func timeoutsNeedTheBitAndRankAndAreBounded() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, bob, _, g, _) = try await setUp(server)
        let now = server.clock.now()
        await expectError(.forbidden) { _ = try await bob.members.timeout("alice", in: g.serverID, until: now + 1_000) }
        await expectError(.badRequest) { _ = try await alice.members.timeout("bob", in: g.serverID, until: now + 29 * 86_400_000) }
        await expectError(.notFound) { _ = try await alice.members.timeout("nobody", in: g.serverID, until: now + 1_000) }
        // An admin (who holds MODERATE_MEMBERS) may not time out the owner.
        _ = try await alice.members.setRole(.admin, of: "bob", in: g.serverID)
        await expectError(.forbidden) { _ = try await bob.members.timeout("alice", in: g.serverID, until: now + 1_000) }
    }

    @Test func aBanWithAnEndLiftsItself() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, bob, _, g, _) = try await setUp(server)
        let now = server.clock.now()
        await expectError(.badRequest) { try await alice.members.ban("bob", from: g.serverID, until: now - 1) }
        try await alice.members.ban("bob", from: g.serverID, until: now + 30_000)
        await expectError(.forbidden) { _ = try await bob.servers.join(g.serverID) }
        server.clock.advance(ms: 31_000)
        try await waitUntil("the ban lifted") {
            do { _ = try await bob.servers.join(g.serverID); return true } catch let e as GuildhallError where e.code == .forbidden { return false }
        }
    }

    @Test func slowModeHoldsAMemberBackButNotThoseWhoManageOrBypass() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, bob, _, g, c) = try await setUp(server)
        await expectError(.badRequest) { _ = try await alice.channels.update(c.channelID, slowModeSeconds: 21_601) }
        #expect(try await alice.channels.update(c.channelID, slowModeSeconds: 10).slowModeSeconds == 10)
        _ = try await bob.messages.send("first", to: c.channelID)
        do {
            _ = try await bob.messages.send("too soon", to: c.channelID)
            Issue.record("a second message within slow mode was accepted")
        } catch let e as GuildhallError {
            #expect(e.code == .rateLimited && e.retryAfterMs > 0 && e.retryAfterMs <= 10_000)
        }
        // The owner (MANAGE_CHANNELS) is not held back.
        _ = try await alice.messages.send("one", to: c.channelID)
        _ = try await alice.messages.send("two", to: c.channelID)
        server.clock.advance(ms: 10_000)
        _ = try await bob.messages.send("in time", to: c.channelID)
        // A role with BYPASS_SLOWMODE lets bob through.
        let role = try await alice.roles.create(in: g.serverID, name: "regular", position: 1, permissions: GHPermissionBits(allow: [.bypassSlowmode]))
        _ = try await alice.roles.grant(role.roleID, to: "bob", in: g.serverID)
        _ = try await bob.messages.send("no wait", to: c.channelID)
        #expect(try await bob.channels.list(of: g.serverID).first { $0.channelID == c.channelID }?.slowModeSeconds == 10)
        try server.restart()
        let (again, _) = try await server.client("alice", device: "after")
        #expect(try await again.channels.list(of: g.serverID).first { $0.channelID == c.channelID }?.slowModeSeconds == 10)
    }
}
