// What the parts that follow the Directory do for each kind of directory
// change (DirectoryFollowOn.swift), read from the changes against the
// Directory before it takes them: values only, no server.

import Testing
import GuildhallCore
@testable import GuildhallServer

@Suite struct DirectoryFollowOnTests {
    /// A server 1 owned by alice with channel 10, and bob a member.
    func guild() throws -> Directory {
        let d = Directory()
        d.apply(try d.decide.createServer(ServerRecord(id: 1, name: "Guild", icon: "", custom: "", owner: "alice", openJoin: true, createdAt: 0)).changes)
        d.apply(try d.decide.createChannel(ChannelRecord(id: 10, serverID: 1, name: "general", topic: "", custom: "", createdAt: 0), by: "alice").changes)
        d.apply(try d.decide.join(1, user: "bob", now: 1).changes)
        return d
    }

    /// The follow-ons of `changes` as the home reads them, then the Directory takes them.
    func followOns(_ d: Directory, _ changes: [DirectoryChange]) -> [DirectoryFollowOn] {
        defer { d.apply(changes) }
        return DirectoryFollowOn.of(changes, before: d)
    }

    @Test func aServerCreatedMakesItsOwnerJoinOnce() throws {
        let d = Directory()
        let created = try d.decide.createServer(ServerRecord(id: 1, name: "Guild", icon: "", custom: "", owner: "alice", openJoin: true, createdAt: 0))
        #expect(followOns(d, created.changes) == [.joined("alice", 1)])
    }

    @Test func aJoinIsAJoinAndASecondSaveOfTheMemberIsNot() throws {
        let d = try guild()
        #expect(followOns(d, try d.decide.join(1, user: "carol", now: 2).changes) == [.joined("carol", 1)])
        let before = try #require(d.member("carol", of: 1))
        var renamed = before
        renamed.joinedAt = 3
        #expect(followOns(d, [.memberSaved(renamed)]).isEmpty, "a member saved again with the same roles changes nobody's access")
    }

    @Test func aRoleGivenOrTakenChangesThatMembersAccessOnly() throws {
        let d = try guild()
        #expect(followOns(d, try d.decide.setRole(.admin, of: "bob", in: 1, by: "alice").changes) == [.accessChanged(1, only: "bob")])
    }

    @Test func leavingAndKickingAreLeaving() throws {
        let d = try guild()
        #expect(followOns(d, try d.decide.leave(1, user: "bob").changes) == [.left("bob", 1)])
        d.apply(try d.decide.join(1, user: "bob", now: 4).changes)
        #expect(followOns(d, try d.decide.kick("bob", from: 1, by: "alice").changes) == [.left("bob", 1)])
    }

    @Test func aBanOfAMemberIsLeavingThenBanned() throws {
        let d = try guild()
        #expect(followOns(d, try d.decide.ban("bob", from: 1, by: "alice", now: 5, until: 900).changes) == [.left("bob", 1), .banned("bob", 1, until: 900)])
        #expect(followOns(d, try d.decide.ban("dave", from: 1, by: "alice", now: 6).changes) == [.banned("dave", 1, until: 0)],
                "a user who is no member is only banned")
    }

    @Test func overridesChangeAccessForTheirMemberOrForEveryone() throws {
        let d = try guild()
        let forBob = OverrideRecord(serverID: 1, channelID: 10, target: .member("bob"), permissions: PermissionOverride(deny: [.viewChannel]))
        #expect(followOns(d, try d.decide.setOverride(forBob, by: "alice").changes) == [.accessChanged(1, only: "bob")])
        let forEveryone = OverrideRecord(serverID: 1, channelID: 10, target: .role(.everyone), permissions: PermissionOverride(deny: [.viewChannel]))
        #expect(followOns(d, try d.decide.setOverride(forEveryone, by: "alice").changes) == [.accessChanged(1, only: nil)])
    }

    @Test func channelsCreatedAndDeletedAndAServerDeletedWithWhatItHeld() throws {
        let d = try guild()
        let created = try d.decide.createChannel(ChannelRecord(id: 11, serverID: 1, name: "more", topic: "", custom: "", createdAt: 2), by: "alice")
        #expect(followOns(d, created.changes) == [.channelCreated(created.value)])
        let renamed = try d.decide.updateChannel(11, by: "alice", name: "renamed", topic: nil, custom: nil, guestVisibility: nil, slowModeSeconds: nil)
        #expect(followOns(d, renamed.changes).isEmpty, "a channel saved again is not created again")
        #expect(followOns(d, try d.decide.deleteChannel(11, by: "alice").changes) == [.channelGone(11)])
        #expect(followOns(d, try d.decide.deleteServer(1, by: "alice").changes) == [.serverGone(1, channels: [10], members: ["alice", "bob"])])
    }
}
