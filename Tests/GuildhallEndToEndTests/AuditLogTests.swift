// The audit log (docs/features.md "Audit log") through the SDK: every kind
// of permissioned change leaves one entry with its actor, target, changes
// and reason; pages come newest first and filter by actor, action and
// target; only VIEW_AUDIT_LOG reads it; changes one makes to oneself are
// not in it; a bad reason changes nothing; entries outlive a restart and
// go past the retention.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct AuditLogTests {
    /// Every entry of the server, newest first, paged `limit` at a time.
    func everything(_ client: GuildhallClient, _ server: UInt64, limit: UInt32 = 100) async throws -> [GHAuditEntry] {
        var all: [GHAuditEntry] = []
        var before: UInt64 = 0
        repeat {
            let page = try await client.servers.auditLog(of: server, before: before, limit: limit)
            all += page.entries
            before = page.nextBefore
        } while before != 0
        return all
    }

    func change(_ e: GHAuditEntry, _ key: String) -> (String, String)? {
        e.changes.first { $0.key == key }.map { ($0.before, $0.after) }
    }

    @Test func eachPermissionedChangeLeavesOneEntryWithWhoWhatAndWhy() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (carol, _) = try await server.client("carol")
        let (g, c) = try await guild(server, owner: alice, members: [bob, carol])
        let s = g.serverID
        _ = try await alice.servers.update(s, name: "Renamed \"Guild\"")
        _ = try await alice.channels.update(c.channelID, topic: "rules", slowModeSeconds: 10)
        let mods = try await alice.roles.create(in: s, name: "mods", position: 2, permissions: GHPermissionBits(allow: [.kick]))
        _ = try await alice.roles.grant(mods.roleID, to: "bob", in: s)
        _ = try await alice.roles.setOverride(in: s, channel: c.channelID, role: 0, GHPermissionBits(deny: [.attachFiles]))
        let m = try await carol.messages.send("spam", to: c.channelID)
        try await alice.messages.pin(m.uid, in: c.channelID)
        _ = try await alice.messages.delete(m.uid, in: c.channelID, reason: "spam")
        let code = try await alice.invites.create(in: s, maxUses: 3)
        try await alice.invites.revoke(code.code)
        _ = try await alice.members.timeout("carol", in: s, until: server.clock.now() + 60_000, reason: "cool off")
        try await bob.members.kick("carol", from: s, reason: "repeat spam")
        try await alice.members.ban("carol", from: s, until: server.clock.now() + 3_600_000, reason: "ban evasion")
        try await alice.members.unban("carol", from: s)
        _ = try await alice.servers.transferOwnership(s, to: "bob")

        let entries = try await everything(alice, s, limit: 4)
        let actions: [GHAuditAction] = [.auditOwnershipTransferred, .auditMemberUnbanned, .auditMemberBanned, .auditMemberKicked,
                                        .auditMemberTimedOut, .auditInviteRevoked, .auditInviteCreated, .auditMessageDeleted,
                                        .auditMessagePinned, .auditOverrideChanged, .auditMemberRolesChanged,
                                        .auditRoleCreated, .auditChannelUpdated, .auditServerUpdated, .auditChannelCreated]
        #expect(entries.map(\.action) == actions)
        #expect(entries.map(\.id) == entries.map(\.id).sorted(by: >), "newest first")
        #expect(entries.allSatisfy { $0.serverID == s && $0.time > 0 })
        func first(_ a: GHAuditAction) throws -> GHAuditEntry {
            guard let found = entries.first(where: { $0.action == a }) else { throw WaitTimeout(what: "an entry of \(a)") }
            return found
        }

        let renamed = try first(.auditServerUpdated)
        #expect(renamed.actor == "alice" && renamed.target == "\(s)" && renamed.changes.count == 1)
        #expect(change(renamed, "name")! == ("\"Guild\"", "\"Renamed \\\"Guild\\\"\""))
        let channel = try first(.auditChannelUpdated)
        #expect(channel.target == "\(c.channelID)" && channel.channelID == c.channelID)
        #expect(change(channel, "topic")! == ("\"\"", "\"rules\"") && change(channel, "slowModeSeconds")! == ("0", "10") && channel.changes.count == 2)
        #expect(change(try first(.auditRoleCreated), "allow")! == ("", "\(GHPermission.kick.rawValue)"))
        let granted = try first(.auditMemberRolesChanged)
        #expect(granted.target == "bob" && change(granted, "roles")! == ("[]", "[\"\(mods.roleID)\"]"))
        let override = try first(.auditOverrideChanged)
        #expect(override.target == "0" && override.channelID == c.channelID && change(override, "deny")! == ("0", "\(GHPermission.attachFiles.rawValue)"))
        let deleted = try first(.auditMessageDeleted)
        #expect(deleted.target == "\(m.uid)" && deleted.reason == "spam" && change(deleted, "sender")! == ("\"carol\"", ""))
        #expect(try first(.auditMessagePinned).target == "\(m.uid)")
        let created = try first(.auditInviteCreated)
        #expect(created.target == code.code && change(created, "maxUses")! == ("", "3"))
        #expect(try first(.auditInviteRevoked).target == code.code)
        let kicked = try first(.auditMemberKicked)
        #expect(kicked.actor == "bob" && kicked.target == "carol" && kicked.reason == "repeat spam")
        #expect(try first(.auditMemberTimedOut).reason == "cool off")
        let banned = try first(.auditMemberBanned)
        #expect(banned.reason == "ban evasion" && change(banned, "until")?.0 == "")
        let transferred = try first(.auditOwnershipTransferred)
        #expect(transferred.target == "bob" && change(transferred, "owner")! == ("\"alice\"", "\"bob\""))

        // The removal above unpinned its message as part of itself; an unpin on its own is its own entry.
        let keep = try await alice.messages.send("keep", to: c.channelID)
        try await alice.messages.pin(keep.uid, in: c.channelID)
        var unpin = GHUnpinMessage()
        unpin.channelID = c.channelID
        unpin.messageUid = keep.uid
        unpin.reason = "stale"
        _ = try await alice.call(.unpinMessage(unpin))
        let unpinned = try #require(try await alice.servers.auditLog(of: s, limit: 1).entries.first)
        #expect(unpinned.action == .auditMessageUnpinned && unpinned.target == "\(keep.uid)" && unpinned.reason == "stale")
    }

    @Test func pagesFilterByActorActionAndTarget() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        _ = try await alice.members.setRole(.admin, of: "bob", in: g.serverID)
        for i in 1...5 { _ = try await alice.channels.update(c.channelID, topic: "a\(i)") }
        for i in 1...3 { _ = try await bob.channels.update(c.channelID, topic: "b\(i)") }
        _ = try await bob.servers.update(g.serverID, name: "by bob")

        let bobs = try await alice.servers.auditLog(of: g.serverID, actor: "bob")
        #expect(bobs.entries.count == 4 && bobs.entries.allSatisfy { $0.actor == "bob" } && bobs.nextBefore == 0)
        let bobsChannel = try await alice.servers.auditLog(of: g.serverID, actor: "bob", action: .auditChannelUpdated)
        #expect(bobsChannel.entries.map { change($0, "topic")!.1 } == ["\"b3\"", "\"b2\"", "\"b1\""])
        let page1 = try await alice.servers.auditLog(of: g.serverID, limit: 3, action: .auditChannelUpdated, target: "\(c.channelID)")
        #expect(page1.entries.count == 3 && page1.nextBefore == page1.entries.last!.id)
        let page2 = try await alice.servers.auditLog(of: g.serverID, before: page1.nextBefore, limit: 3, action: .auditChannelUpdated, target: "\(c.channelID)")
        let page3 = try await alice.servers.auditLog(of: g.serverID, before: page2.nextBefore, limit: 3, action: .auditChannelUpdated, target: "\(c.channelID)")
        #expect((page1.entries + page2.entries + page3.entries).map { change($0, "topic")!.1 }
                == ["\"b3\"", "\"b2\"", "\"b1\"", "\"a5\"", "\"a4\"", "\"a3\"", "\"a2\"", "\"a1\""])
        #expect(page3.nextBefore == 0 && page3.entries.count == 2)
        #expect(try await alice.servers.auditLog(of: g.serverID, target: "nobody").entries.isEmpty)
        await expectError(.badRequest) { _ = try await alice.servers.auditLog(of: g.serverID, limit: 101) }
    }

    @Test func onlyViewAuditLogReadsItAndOwnActsAreNotInIt() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (eve, _) = try await server.client("eve")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        // Bob's own message, recalled and deleted by himself, and his leaving: not permissioned changes.
        let own = try await bob.messages.send("oops", to: c.channelID)
        _ = try await bob.messages.recall(own.uid, in: c.channelID)
        let again = try await bob.messages.send("oops again", to: c.channelID)
        _ = try await bob.messages.delete(again.uid, in: c.channelID)
        await expectError(.forbidden) { _ = try await bob.servers.auditLog(of: g.serverID) }
        try await bob.servers.leave(g.serverID)
        #expect(try await everything(alice, g.serverID).map(\.action) == [.auditChannelCreated])
        // A stranger is answered as for a server that does not exist.
        await expectError(.notFound) { _ = try await eve.servers.auditLog(of: g.serverID) }
        await expectError(.notFound) { _ = try await eve.servers.auditLog(of: g.serverID + 7_777) }
        // The bit can be given.
        _ = try await eve.servers.join(g.serverID)
        _ = try await alice.roles.setOverride(in: g.serverID, user: "eve", GHPermissionBits(allow: [.viewAuditLog]))
        #expect(try await eve.servers.auditLog(of: g.serverID).entries.first?.action == .auditOverrideChanged)
    }

    @Test func aReasonTooLongChangesNothing() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        let long = String(repeating: "é", count: 513)
        await expectError(.badRequest) { try await alice.members.kick("bob", from: g.serverID, reason: long) }
        let m = try await bob.messages.send("keep me", to: c.channelID)
        await expectError(.badRequest) { _ = try await alice.messages.delete(m.uid, in: c.channelID, reason: long) }
        #expect(try await alice.members.list(of: g.serverID).contains { $0.userID == "bob" })
        #expect(try await alice.messages.get([m.uid]).first?.body.text == "keep me")
        try await alice.members.kick("bob", from: g.serverID, reason: String(repeating: "é", count: 512))
        #expect(try await everything(alice, g.serverID).map(\.action) == [.auditMemberKicked, .auditChannelCreated])
    }

    @Test func entriesOutliveARestartAndGoPastTheRetention() async throws {
        let server = try TestServer { $0.auditLogRetentionDays = 2 }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (g, c) = try await guild(server, owner: alice, members: [])
        _ = try await alice.channels.update(c.channelID, name: "old")
        // A ban that ends by itself is lifted in the log too, with no actor.
        // (An hour, not a second: under load a second of real time may pass before the clock is moved.)
        try await alice.members.ban("eve", from: g.serverID, until: server.clock.now() + 3_600_000)
        try server.restart()
        let (again, _) = try await server.client("alice", device: "after")
        #expect(try await everything(again, g.serverID).count == 3)
        server.clock.advance(ms: 86_400_000 + 1_000)
        try await waitUntil("the ban's end logged") {
            try await again.servers.auditLog(of: g.serverID, action: .auditMemberUnbanned).entries.count == 1
        }
        _ = try await again.channels.update(c.channelID, name: "newer")
        let kept = try await everything(again, g.serverID)
        #expect(kept.map(\.action) == [.auditChannelUpdated, .auditMemberUnbanned, .auditMemberBanned, .auditChannelUpdated, .auditChannelCreated])
        #expect(kept[1].actor == "" && kept[1].target == "eve")
        // Two days on, the first three are past the retention; the daily prune takes them.
        server.clock.advance(ms: 86_400_000 + 500)
        var seen: [GHAuditAction] = []
        do {
            try await waitUntil("the prune") {
                seen = try await everything(again, g.serverID).map(\.action)
                return seen.count == 2
            }
        } catch { Issue.record("after the prune was due the log held \(seen)") }
        #expect(try await everything(again, g.serverID).map(\.action) == [.auditChannelUpdated, .auditMemberUnbanned])
    }
}
