// Permission resolution (docs/features.md) and the role hierarchy, without I/O.

import Testing
@testable import GuildhallCore

@Suite struct PermissionsTests {
    static let server: ServerID = 1, channel: ChannelID = 10, moderators: RoleID = 5, helpers: RoleID = 6

    /// A server whose everyone role allows sending, with two custom roles and nothing else said.
    func book() -> ServerPermissions {
        var p = ServerPermissions()
        p.save(RoleRecord(serverID: Self.server, id: .everyone, name: "everyone", position: 0,
                          permissions: PermissionOverride(allow: [.viewChannel, .sendMessages]), createdAt: 0))
        p.save(RoleRecord(serverID: Self.server, id: Self.moderators, name: "mods", position: 3, permissions: .inherit, createdAt: 0))
        p.save(RoleRecord(serverID: Self.server, id: Self.helpers, name: "helpers", position: 2, permissions: .inherit, createdAt: 0))
        return p
    }

    func sends(_ p: ServerPermissions, _ roles: [RoleID] = [moderators]) -> Bool {
        p.resolve("bob", holding: roles, in: Self.channel).contains(.sendMessages)
    }

    func set(_ p: inout ServerPermissions, channel: ChannelID, _ target: OverrideTarget, allow: Permission = [], deny: Permission = []) {
        p.save(OverrideRecord(serverID: Self.server, channelID: channel, target: target, permissions: PermissionOverride(allow: allow, deny: deny)))
    }

    func setRole(_ p: inout ServerPermissions, _ id: RoleID, allow: Permission = [], deny: Permission = []) {
        var r = p.roles[id]!
        r.permissions = PermissionOverride(allow: allow, deny: deny)
        p.save(r)
    }

    /// Each level, from `everyone` up to the member on the channel, overrides
    /// every level below it, in both directions; Inherit passes the word down.
    @Test func theMostSpecificLevelThatSaysSomethingWins() {
        var p = book()
        #expect(sends(p), "everyone allows")
        setRole(&p, .everyone, allow: [.viewChannel])
        #expect(!sends(p), "nothing on everyone means not allowed")
        setRole(&p, Self.moderators, allow: .sendMessages)
        #expect(sends(p), "the member's role on the server beats everyone")
        set(&p, channel: 0, .member("bob"), deny: .sendMessages)
        #expect(!sends(p), "the member on the server beats the role on the server")
        set(&p, channel: Self.channel, .role(.everyone), allow: .sendMessages)
        #expect(sends(p), "a role on the channel (even everyone's) beats the member on the server")
        set(&p, channel: Self.channel, .role(Self.moderators), deny: .sendMessages)
        #expect(!sends(p), "the member's role on the channel beats everyone's on the channel")
        set(&p, channel: Self.channel, .member("bob"), allow: .sendMessages)
        #expect(sends(p), "the member on the channel beats everything")
        set(&p, channel: Self.channel, .member("bob"))
        #expect(!sends(p), "Inherit on every bit removes the override")
        #expect(p.resolve("bob", holding: [Self.moderators], in: 11).contains(.sendMessages) == false,
                "another channel only has the server's levels: the member's deny")
        #expect(p.resolve("carol", holding: [], in: 11).contains(.viewChannel), "another member keeps everyone's bits")
    }

    @Test func withinOneLevelAnyAllowAmongTheRolesBeatsADeny() {
        var p = book()
        setRole(&p, Self.moderators, deny: .sendMessages)
        setRole(&p, Self.helpers, allow: .sendMessages)
        #expect(sends(p, [Self.moderators, Self.helpers]))
        #expect(!sends(p, [Self.moderators]))
        set(&p, channel: Self.channel, .role(Self.moderators), deny: .viewChannel)
        set(&p, channel: Self.channel, .role(Self.helpers), allow: .viewChannel)
        #expect(p.resolve("bob", holding: [Self.moderators, Self.helpers], in: Self.channel).contains(.viewChannel))
        #expect(!p.resolve("bob", holding: [Self.moderators], in: Self.channel).contains(.viewChannel))
    }

    @Test func aServerWhereNothingDeniesViewingIsUniformUntilSomethingDoes() {
        var p = book()
        #expect(p.viewIsUniform)
        set(&p, channel: Self.channel, .member("bob"), deny: .viewChannel)
        #expect(!p.viewIsUniform)
        set(&p, channel: Self.channel, .member("bob"))
        #expect(p.viewIsUniform)
        setRole(&p, .everyone, allow: .sendMessages)
        #expect(!p.viewIsUniform, "everyone no longer views: only some may")
    }

    @Test func aBitBothAllowedAndDeniedOrUnknownIsRefused() {
        #expect(throws: Failure.self) { try PermissionOverride(allow: .mention, deny: .mention).validated(field: "p") }
        #expect(throws: Failure.self) { try PermissionOverride(allow: Permission(rawValue: 1 << 40)).validated(field: "p") }
        #expect(throws: Failure.self) { try PermissionOverride(allow: .kick).validated(field: "p", within: .perChannel) }
        #expect((try? PermissionOverride(allow: .mention, deny: .kick).validated(field: "p")) != nil)
    }

    /// Migration 6 wrote these numbers into existing servers' roles, migration 11 added ATTACH_FILES to
    /// everyone's, 15 CREATE_INVITES to everyone's and admin's, 16 MODERATE_MEMBERS and 17 PIN_MESSAGES to admin's.
    @Test func theStartingRolesHaveTheBitsTheMigrationsWrote() {
        #expect(Permission.everyoneDefault.rawValue == 8241 | 16384 | 32768)
        #expect(Permission.adminDefault.rawValue == 8134 | 32768 | 65536 | 262144 | 524288 | 1048576 | 2097152)
    }

    // MARK: The hierarchy, through the Directory

    func guild() throws -> Directory {
        let d = Directory()
        _ = d.take(try d.decide.createServer(ServerRecord(id: Self.server, name: "Guild", icon: "", custom: "", owner: "alice", openJoin: true, createdAt: 0)))
        for u in ["bob", "carol", "dave"] { _ = d.take(try d.decide.join(Self.server, user: u, now: 1)) }
        return d
    }

    func code(_ body: () throws -> Void) -> FailureCode? {
        do { try body(); return nil } catch { return (error as? Failure)?.code }
    }

    @Test func aRoleIsChangedOnlyFromAboveIt() throws {
        let d = try guild()
        let mods = d.take(try d.decide.createRole(in: Self.server, by: "alice", name: "mods", position: 5,
                                    permissions: PermissionOverride(allow: [.manageRoles, .kick]), now: 2))
        let juniors = d.take(try d.decide.createRole(in: Self.server, by: "alice", name: "juniors", position: 3, permissions: .inherit, now: 2))
        _ = d.take(try d.decide.grant(mods.id, to: "bob", in: Self.server, by: "alice"))
        // Bob (at 5) manages what is below 5, and nothing at or above it.
        _ = d.take(try d.decide.grant(juniors.id, to: "carol", in: Self.server, by: "bob"))
        #expect(code { _ = d.take(try d.decide.grant(mods.id, to: "dave", in: Self.server, by: "bob")) } == .forbidden)
        #expect(code { _ = d.take(try d.decide.createRole(in: Self.server, by: "bob", name: "x", position: 5, permissions: .inherit, now: 3)) } == .forbidden)
        #expect(code { _ = d.take(try d.decide.updateRole(juniors.id, in: Self.server, by: "bob", name: nil, position: 6, permissions: nil)) } == .forbidden)
        #expect(code { _ = d.take(try d.decide.updateRole(mods.id, in: Self.server, by: "bob", name: "me", position: nil, permissions: nil)) } == .forbidden)
        // He allows only what he holds himself.
        #expect(code { _ = d.take(try d.decide.updateRole(juniors.id, in: Self.server, by: "bob", name: nil, position: nil,
                                            permissions: PermissionOverride(allow: .ban))) } == .forbidden)
        _ = d.take(try d.decide.updateRole(juniors.id, in: Self.server, by: "bob", name: nil, position: nil, permissions: PermissionOverride(allow: .kick)))
        // Members are outranked by their highest role.
        #expect(d.take(try d.decide.kick("carol", from: Self.server, by: "bob")).userID == "carol")
        _ = d.take(try d.decide.grant(mods.id, to: "dave", in: Self.server, by: "alice"))
        #expect(code { _ = d.take(try d.decide.kick("dave", from: Self.server, by: "bob")) } == .forbidden, "an equal is not below")
        #expect(code { _ = d.take(try d.decide.kick("alice", from: Self.server, by: "bob")) } == .forbidden, "the owner is above every role")
    }

    @Test func deletingARoleTakesItFromItsHoldersAndItsOverridesGo() throws {
        let d = try guild()
        let mods = d.take(try d.decide.createRole(in: Self.server, by: "alice", name: "mods", position: 2, permissions: PermissionOverride(allow: .kick), now: 2))
        _ = d.take(try d.decide.grant(mods.id, to: "bob", in: Self.server, by: "alice"))
        let c = d.take(try d.decide.createChannel(ChannelRecord(id: Self.channel, serverID: Self.server, name: "c", topic: "", custom: "", createdAt: 0), by: "alice"))
        _ = d.take(try d.decide.setOverride(OverrideRecord(serverID: Self.server, channelID: c.id, target: .role(mods.id),
                                             permissions: PermissionOverride(deny: .viewChannel)), by: "alice"))
        #expect(!d.canView("bob", c))
        let deleted = try d.decide.deleteRole(mods.id, in: Self.server, by: "alice")
        d.apply(deleted.changes)
        let holders = deleted.changes.compactMap { c -> MemberRecord? in if case .memberSaved(let m) = c { m } else { nil } }
        #expect(holders.map(\.userID) == ["bob"] && holders[0].roles.isEmpty)
        #expect(d.member("bob", of: Self.server)?.roles.isEmpty == true)
        #expect(d.canView("bob", c))
        #expect(d.permissions(of: "bob", in: Self.server)?.contains(.kick) == false)
        #expect(code { _ = d.take(try d.decide.deleteRole(.everyone, in: Self.server, by: "alice")) } == .badRequest)
    }

    @Test func aMemberWhoMayNotViewAChannelIsAnsweredAsIfItDidNotExist() throws {
        let d = try guild()
        let c = d.take(try d.decide.createChannel(ChannelRecord(id: Self.channel, serverID: Self.server, name: "c", topic: "", custom: "", createdAt: 0), by: "alice"))
        _ = d.take(try d.decide.setOverride(OverrideRecord(serverID: Self.server, channelID: c.id, target: .member("bob"),
                                             permissions: PermissionOverride(deny: .viewChannel)), by: "alice"))
        var missing: Failure?, hidden: Failure?
        do { try d.require(.sendMessages, of: "bob", at: .channel(999)) } catch { missing = error }
        do { try d.require(.sendMessages, of: "bob", at: .channel(c.id)) } catch { hidden = error }
        #expect(hidden?.code == .notFound && hidden?.message == "channel \(c.id) not found")
        #expect(missing?.message == "channel 999 not found")
        #expect(try d.seen(by: "bob").channels(of: Self.server).isEmpty)
        #expect(try d.seen(by: "carol").channels(of: Self.server).map(\.id) == [c.id])
    }
}
