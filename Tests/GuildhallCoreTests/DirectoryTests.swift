// The rules of docs/features.md on servers, members and channels, without I/O.

import Testing
@testable import GuildhallCore

@Suite struct DirectoryTests {
    func server(_ id: ServerID = 1, owner: UserID = "alice", open: Bool = true) -> ServerRecord {
        ServerRecord(id: id, name: "Guild", icon: "", custom: "", owner: owner, openJoin: open, createdAt: 0)
    }

    func channel(_ id: ChannelID = 10, server: ServerID = 1) -> ChannelRecord {
        ChannelRecord(id: id, serverID: server, name: "general", topic: "", custom: "", createdAt: 0)
    }

    func code(_ body: () throws -> Void) -> FailureCode? {
        do { try body(); return nil } catch { return (error as? Failure)?.code }
    }

    @Test func theCreatorBecomesOwnerAndTheOnlyMember() throws {
        let d = Directory()
        let decision = try d.decide.createServer(server())
        #expect(d.server(1) == nil, "nothing changes before the decision is applied (committed)")
        d.apply(decision.changes)
        let changes = decision.changes
        #expect(changes.count == 4)
        #expect(changes.contains(.roleSaved(RoleRecord.starting(server: 1, at: 0)[0])))
        #expect(d.member("alice", of: 1)?.role == .owner)
        #expect(d.memberCount(1) == 1)
        #expect(d.serverIDs(of: "alice") == [1])
    }

    @Test func anEmptyOrOverlongNameIsRefused() {
        let d = Directory()
        var r = server()
        r.name = "  "
        #expect(code { _ = d.take(try d.decide.createServer(r)) } == .badRequest)
        r.name = String(repeating: "x", count: 101)
        #expect(code { _ = d.take(try d.decide.createServer(r)) } == .tooLarge)
    }

    @Test func anyoneMayJoinAnOpenServerOnce() throws {
        let d = Directory()
        _ = d.take(try d.decide.createServer(server()))
        _ = d.take(try d.decide.join(1, user: "bob", now: 5))
        #expect(d.member("bob", of: 1)?.role == .member)
        #expect(d.memberCount(1) == 2)
        #expect(code { _ = d.take(try d.decide.join(1, user: "bob", now: 6)) } == .conflict)
    }

    @Test func anInviteOnlyServerNeedsAnInvitation() throws {
        let d = Directory()
        _ = d.take(try d.decide.createServer(server(open: false)))
        #expect(code { _ = d.take(try d.decide.join(1, user: "bob", now: 1)) } == .notFound, "a closed server does not show itself")
        _ = d.take(try d.decide.invite("bob", to: 1, by: "alice", now: 2))
        let changes = try d.decide.acceptInvite(1, user: "bob", now: 3).changes
        d.apply(changes)
        #expect(changes.contains(.inviteRemoved(1, "bob")))
        #expect(d.member("bob", of: 1)?.role == .member)
        #expect(code { _ = d.take(try d.decide.acceptInvite(1, user: "bob", now: 4)) } == .notFound)
    }

    @Test func plainMembersCannotInviteOrManageChannelsUntilTheyAreAdmins() throws {
        let d = Directory()
        _ = d.take(try d.decide.createServer(server()))
        _ = d.take(try d.decide.join(1, user: "bob", now: 1))
        #expect(code { try d.require(.invite, of: "bob", at: .server(1)) } == .forbidden)
        #expect(code { try d.require(.manageChannels, of: "bob", at: .server(1)) } == .forbidden)
        _ = d.take(try d.decide.setRole(.admin, of: "bob", in: 1, by: "alice"))
        try d.require([.invite, .manageChannels], of: "bob", at: .server(1))
        #expect(code { try d.require(.manageRoles, of: "bob", at: .server(1)) } == .forbidden)
        #expect(code { try d.require(.invite, of: "eve", at: .server(1)) } == .notFound)
    }

    @Test func aNonMemberSeesNotFoundExactlyAsForAMissingServer() throws {
        let d = Directory()
        _ = d.take(try d.decide.createServer(server()))
        _ = d.take(try d.decide.createChannel(channel(), by: "alice"))
        #expect(code { _ = try d.seen(by: "eve").server(1) } == .notFound)
        #expect(code { _ = try d.seen(by: "eve").server(99) } == .notFound)
        #expect(code { _ = try d.seen(by: "eve").channel(10) } == .notFound)
        #expect(code { try d.require(.sendMessages, of: "eve", at: .channel(10)) } == .notFound)
    }

    @Test func theOwnerCannotLeaveButMembersCan() throws {
        let d = Directory()
        _ = d.take(try d.decide.createServer(server()))
        _ = d.take(try d.decide.join(1, user: "bob", now: 1))
        #expect(code { _ = d.take(try d.decide.leave(1, user: "alice")) } == .forbidden)
        _ = d.take(try d.decide.leave(1, user: "bob"))
        #expect(d.member("bob", of: 1)?.role == nil)
        #expect(d.serverIDs(of: "bob").isEmpty)
    }

    @Test func adminsKickMembersButNotAdminsOrTheOwner() throws {
        let d = Directory()
        _ = d.take(try d.decide.createServer(server()))
        for u in ["bob", "carol", "dave"] { _ = d.take(try d.decide.join(1, user: u, now: 1)) }
        _ = d.take(try d.decide.setRole(.admin, of: "bob", in: 1, by: "alice"))
        _ = d.take(try d.decide.setRole(.admin, of: "carol", in: 1, by: "alice"))
        #expect(code { _ = d.take(try d.decide.kick("carol", from: 1, by: "bob")) } == .forbidden)
        #expect(code { _ = d.take(try d.decide.kick("alice", from: 1, by: "bob")) } == .forbidden)
        _ = d.take(try d.decide.kick("dave", from: 1, by: "bob"))
        #expect(d.member("dave", of: 1)?.role == nil)
        _ = d.take(try d.decide.kick("carol", from: 1, by: "alice"))
        #expect(code { _ = d.take(try d.decide.kick("dave", from: 1, by: "dave")) } == .notFound)
    }

    @Test func onlyTheOwnerChangesRolesAndTheOwnerRoleIsNotAssignable() throws {
        let d = Directory()
        _ = d.take(try d.decide.createServer(server()))
        _ = d.take(try d.decide.join(1, user: "bob", now: 1))
        #expect(code { _ = d.take(try d.decide.setRole(.owner, of: "bob", in: 1, by: "alice")) } == .badRequest)
        _ = d.take(try d.decide.setRole(.admin, of: "bob", in: 1, by: "alice"))
        #expect(code { _ = d.take(try d.decide.setRole(.member, of: "alice", in: 1, by: "bob")) } == .forbidden)
    }

    @Test func deletingAServerRemovesItsChannelsAndMemberships() throws {
        let d = Directory()
        _ = d.take(try d.decide.createServer(server()))
        _ = d.take(try d.decide.join(1, user: "bob", now: 1))
        _ = d.take(try d.decide.createChannel(channel(), by: "alice"))
        #expect(code { _ = d.take(try d.decide.deleteServer(1, by: "bob")) } == .forbidden)
        let (_, members) = d.take(try d.decide.deleteServer(1, by: "alice"))
        #expect(Set(members) == ["alice", "bob"])
        #expect(d.server(1) == nil)
        #expect(d.channel(10) == nil)
        #expect(d.serverIDs(of: "bob").isEmpty)
    }

    @Test func messagesTakeConsecutiveSeqsAndTimeNeverGoesBack() throws {
        let d = Directory()
        _ = d.take(try d.decide.createServer(server()))
        _ = d.take(try d.decide.createChannel(channel(), by: "alice"))
        let a = d.sequence(d.channel(10)!, now: 1_000)
        #expect(d.channel(10)?.lastSeq == 0, "nothing is visible before its commit")
        d.messageCommitted(10, seq: a.seq, time: a.time)
        let b = d.sequence(d.channel(10)!, now: 900)
        #expect(a.seq == 1 && b.seq == 2)
        #expect(b.time == 1_000)
        d.messageCommitted(10, seq: b.seq, time: b.time)
        #expect(d.channel(10)?.lastSeq == 2)
    }

    @Test func loadingRebuildsMembershipsAndChannels() throws {
        let d = Directory()
        d.load(servers: [server()],
               members: [MemberRecord(serverID: 1, userID: "alice", role: .owner, joinedAt: 0),
                         MemberRecord(serverID: 1, userID: "bob", role: .member, joinedAt: 0)],
               invites: [InviteRecord(serverID: 1, userID: "carol", inviter: "alice", createdAt: 0)],
               channels: [channel()], roles: RoleRecord.starting(server: 1, at: 0))
        #expect(d.memberCount(1) == 2)
        #expect(d.serverIDs(of: "bob") == [1])
        _ = d.take(try d.decide.acceptInvite(1, user: "carol", now: 1))
        #expect(try d.seen(by: "bob").channels(of: 1).map(\.id) == [10])
    }

    @Test func nothingChangesUntilADecisionIsApplied() throws {
        let d = Directory()
        d.take(try d.decide.createServer(server()))
        let join = try d.decide.join(1, user: "bob", now: 1)
        let channel = try d.decide.createChannel(channel(), by: "alice")
        #expect(d.memberCount(1) == 1 && d.channel(10) == nil, "decided, not yet committed")
        d.apply(join.changes)
        d.apply(channel.changes)
        #expect(d.memberCount(1) == 2 && d.channel(10) != nil)
    }

    @Test func aSavedChannelKeepsTheTailItsMessagesMovedMeanwhile() throws {
        let d = Directory()
        d.take(try d.decide.createServer(server()))
        d.take(try d.decide.createChannel(channel(), by: "alice"))
        let rename = try d.decide.updateChannel(10, by: "alice", name: "renamed", topic: nil, custom: nil)
        _ = d.sequence(d.channel(10)!, now: 50)
        d.messageCommitted(10, seq: 1, time: 50)
        d.apply(rename.changes)
        #expect(d.channel(10)?.name == "renamed")
        #expect(d.channel(10)?.lastSeq == 1 && d.channel(10)?.lastMessageTime == 50)
    }

    @Test func aChangeToAServerDeletedMeanwhileDoesNothing() throws {
        let d = Directory()
        d.take(try d.decide.createServer(server()))
        let join = try d.decide.join(1, user: "bob", now: 1)
        let channel = try d.decide.createChannel(channel(), by: "alice")
        d.take(try d.decide.deleteServer(1, by: "alice"))
        d.apply(join.changes + channel.changes)
        #expect(d.server(1) == nil && d.channel(10) == nil)
        #expect(d.serverIDs(of: "bob").isEmpty)
    }

    @Test func aServerIsLargeFromTheThresholdAndWithALowMarkSmallAgainOnlyBelowIt() throws {
        let d = Directory()
        d.sizeMarks = ServerSizeMarks(threshold: 3, lowMark: 2)
        d.take(try d.decide.createServer(server()))
        #expect(d.isSmall(1))
        for user in ["bob", "carol"] { d.take(try d.decide.join(1, user: user, now: 1)) }
        #expect(!d.isSmall(1), "three members: large")
        d.take(try d.decide.leave(1, user: "carol"))
        #expect(!d.isSmall(1), "two: not below the low mark")
        d.take(try d.decide.leave(1, user: "bob"))
        #expect(d.isSmall(1), "one: below it")
        d.take(try d.decide.join(1, user: "bob", now: 2))
        #expect(d.isSmall(1), "grown back to two from small: small until the threshold")
        d.take(try d.decide.join(1, user: "carol", now: 2))
        d.sizeMarks = ServerSizeMarks(threshold: 3)
        d.take(try d.decide.leave(1, user: "carol"))
        #expect(d.isSmall(1), "without a low mark, small below the threshold")
        d.sizeMarks = ServerSizeMarks(threshold: 2)
        #expect(!d.isSmall(1), "a live threshold change rechecks every server")
        #expect(!d.isSmall(99), "a server not held is not small")
    }
}
