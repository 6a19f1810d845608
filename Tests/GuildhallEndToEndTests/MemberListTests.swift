// Member lists (docs/features.md "Member lists") through the SDK: list
// order, pages and cursors, the role and online filters, counts, presence
// in entries, a watched window told of joins, leaves, role changes and
// presence inside it (and nothing outside it), and bad input.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct MemberListTests {
    /// alice owns a server with `count` members named m00, m01, … (their clients closed) and bob, online.
    func setUp(_ server: TestServer, count: Int) async throws -> (GuildhallClient, GuildhallClient, Recorder, GHServerInfo) {
        let (alice, _) = try await server.client("alice")
        let g = try await alice.servers.create(name: "G")
        for i in 0..<count {
            let (m, _) = try await server.client(String(format: "m%02d", i))
            _ = try await m.servers.join(g.serverID)
            m.close()
        }
        let (bob, bobEvents) = try await server.client("bob")
        _ = try await bob.servers.join(g.serverID)
        return (alice, bob, bobEvents, g)
    }

    @Test func pagesFollowTheListOrderWithCountsAndPresence() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, bob, _, g) = try await setUp(server, count: 12)
        let mod = try await alice.roles.create(in: g.serverID, name: "mod", position: 5, permissions: GHPermissionBits())
        _ = try await alice.roles.grant(mod.roleID, to: "m07", in: g.serverID)
        var seen: [String] = []
        var cursor = ""
        var pages = 0
        repeat {
            let page = try await bob.members.page(of: g.serverID, cursor: cursor, limit: 5)
            #expect(page.memberCount == 14)
            try await waitUntil("alice and bob online in the count") { try await bob.members.page(of: g.serverID, limit: 1).onlineCount == 2 }
            seen += page.members.map(\.userID)
            cursor = page.nextCursor
            pages += 1
        } while !cursor.isEmpty
        let rest = (0..<12).map { String(format: "m%02d", $0) }.filter { $0 != "m07" }
        #expect(seen == ["alice", "m07", "bob"] + rest, "the owner, then the higher role, then by name")
        #expect(pages == 3)
        let first = try await bob.members.page(of: g.serverID, limit: 3)
        #expect(first.members.map(\.presence.status) == [.presenceOnline, .presenceOffline, .presenceOnline])
        #expect(first.members[1].roleIds == [mod.roleID] && first.members[0].joinedAt > 0)

        let online = try await bob.members.page(of: g.serverID, onlineOnly: true)
        #expect(online.members.map(\.userID) == ["alice", "bob"] && online.nextCursor.isEmpty)
        let mods = try await bob.members.page(of: g.serverID, role: mod.roleID)
        #expect(mods.members.map(\.userID) == ["m07"])
        #expect(try await bob.members.list(of: g.serverID).map(\.userID) == seen, "the SDK's whole list pages through the same order")
    }

    @Test func aWatchedWindowHearsJoinsLeavesRolesAndPresenceInsideItOnly() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, bob, bobEvents, g) = try await setUp(server, count: 6)
        // The window: alice, bob, m00, m01 (m02 onward lies outside it).
        let page = try await bob.members.page(of: g.serverID, limit: 4, watch: true)
        #expect(page.members.map(\.userID) == ["alice", "bob", "m00", "m01"])

        // A newcomer whose name sorts inside the window is told; one sorting after it is not.
        let (aaron, _) = try await server.client("a-newcomer")
        _ = try await aaron.servers.join(g.serverID)
        let joined = try await waitFor("the newcomer's join inside the window") {
            bobEvents.memberListUpdates.first { $0.member.userID == "a-newcomer" }
        }
        #expect(joined.kind == .memberJoined && joined.inWindow && joined.memberCount == 9)
        let (zed, _) = try await server.client("zz-outside")
        _ = try await zed.servers.join(g.serverID)
        let mod = try await alice.roles.create(in: g.serverID, name: "mod", position: 5, permissions: GHPermissionBits())
        _ = try await alice.roles.grant(mod.roleID, to: "m03", in: g.serverID)
        let promoted = try await waitFor("m03 moved into the window by a role") {
            bobEvents.memberListUpdates.first { $0.member.userID == "m03" }
        }
        #expect(promoted.kind == .memberUpdated && promoted.inWindow && promoted.member.roleIds == [mod.roleID])
        _ = try await alice.members.kick("m00", from: g.serverID)
        let left = try await waitFor("m00 left the window") { bobEvents.memberListUpdates.first { $0.member.userID == "m00" } }
        #expect(left.kind == .memberLeft && !left.inWindow)
        #expect(!bobEvents.memberListUpdates.contains { $0.member.userID == "zz-outside" }, "a join outside the window is not told")

        try await bob.members.stopWatching(of: g.serverID)
        _ = try await alice.members.kick("m01", from: g.serverID)
        // Watching again, bob is told of the next join: the guild's home tells him in order,
        // so had the kick been told, it would have come first.
        _ = try await bob.members.page(of: g.serverID, limit: 4, watch: true)
        let (early, _) = try await server.client("a-early")
        _ = try await early.servers.join(g.serverID)
        _ = try await waitFor("the next join told") { bobEvents.memberListUpdates.first { $0.member.userID == "a-early" } }
        #expect(!bobEvents.memberListUpdates.contains { $0.member.userID == "m01" }, "a window no longer watched is not told")
    }

    @Test func aWatchedListOfOnlineMembersSeesThemComeAndGo() async throws {
        let server = try TestServer { $0.smallServerThreshold = 0 }
        defer { server.stop() }
        let (_, bob, bobEvents, g) = try await setUp(server, count: 2)
        let page = try await bob.members.page(of: g.serverID, onlineOnly: true, watch: true)
        #expect(page.members.map(\.userID) == ["alice", "bob"] && page.onlineCount == 2)
        let (m01, _) = try await server.client("m01", device: "again")
        let came = try await waitFor("m01 came online into the list") { bobEvents.memberListUpdates.first { $0.member.userID == "m01" && $0.inWindow } }
        #expect(came.member.presence.status == .presenceOnline && came.onlineCount == 3)
        _ = try await bobEvents.presence(of: "m01") { $0.status == .presenceOnline }
        m01.close()
        _ = try await waitFor("m01 went offline out of the list") { bobEvents.memberListUpdates.first { $0.member.userID == "m01" && !$0.inWindow } }
    }

    @Test func aSearchFindsMembersByAWordOfTheirNameOrTheirID() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, bob, _, g) = try await setUp(server, count: 3)
        _ = try await bob.people.setProfile(displayName: "Robert Builder")
        _ = try await alice.members.setNickname("Boss Lady", in: g.serverID)
        let names = { (q: String) in try await bob.members.page(of: g.serverID, query: q).members.map(\.userID) }
        // (The names reach the member records as the profiles' copies: a moment later.)
        try await waitUntil("the names copied") {
            let bob = try await names("build"), alice = try await names("boss")
            return bob == ["bob"] && alice == ["alice"]
        }
        #expect(try await names("ROB") == ["bob"], "case-insensitive")
        #expect(try await names("bo") == ["alice", "bob"], "alice by her nickname's word, bob by his id")
        #expect(try await names("m0") == ["m00", "m01", "m02"], "by id")
        #expect(try await names("lady b").isEmpty, "the query starts a word: it is not a word set")
        #expect(try await bob.members.page(of: g.serverID, limit: 2, query: "m0").members.map(\.userID) == ["m00", "m01"])
        await expectError(.badRequest) { _ = try await bob.members.page(of: g.serverID, watch: true, query: "m") }
        await expectError(.badRequest) { _ = try await bob.members.page(of: g.serverID, query: String(repeating: "x", count: 101)) }
        let (eve, _) = try await server.client("eve")
        await expectError(.notFound) { _ = try await eve.members.page(of: g.serverID, query: "bo") }
    }

    @Test func badMemberListRequestsAreRefused() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (_, bob, _, g) = try await setUp(server, count: 1)
        let (eve, _) = try await server.client("eve")
        await expectError(.notFound) { _ = try await eve.members.page(of: g.serverID) }
        await expectError(.notFound) { _ = try await eve.members.page(of: g.serverID, watch: true) }
        await expectError(.badRequest) { _ = try await bob.members.page(of: g.serverID, cursor: "not a cursor") }
        await expectError(.limitReached) { _ = try await bob.members.page(of: g.serverID, limit: 1_001) }
        #expect(try await bob.members.page(of: g.serverID, limit: 1_000).members.count == 3)
    }
}
