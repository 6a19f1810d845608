// Profiles (docs/features.md "Profiles") through the SDK: display names and
// avatars kept at the user's home and answered in order; copied onto member
// records, so member lists show them and order by them; told as
// USER_UPDATED to those who hear the user; nicknames (one's own, others'
// with the bit, audited); bad input; a restart; a newcomer's copy.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct ProfileTests {
    @Test func aProfileIsKeptAnsweredInOrderAndRefusedWhenBad() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let p = try await alice.people.setProfile(displayName: "Alice ✓", avatar: "https://example.com/a.png")
        #expect(p.userID == "alice" && p.displayName == "Alice ✓" && p.avatar == "https://example.com/a.png" && p.updatedAt > 0)
        // Only what is given changes.
        #expect(try await alice.people.setProfile(avatar: "").displayName == "Alice ✓")
        await expectError(.badRequest) { try await alice.people.setProfile(displayName: String(repeating: "x", count: 65)) }
        await expectError(.badRequest) { try await alice.people.setProfile(displayName: "tab\there") }
        await expectError(.badRequest) { try await alice.people.setProfile(avatar: String(repeating: "x", count: 513)) }
        let users = try await alice.people.profiles(["nobody", "alice"])
        #expect(users.map(\.userID) == ["nobody", "alice"] && users[0].displayName == "" && users[0].updatedAt == 0)
        #expect(users[1].displayName == "Alice ✓" && users[1].avatar == "")
        await expectError(.limitReached) { _ = try await alice.people.profiles((0...100).map { "u\($0)" }) }
        try server.restart()
        let (again, _) = try await server.client("alice", device: "after")
        #expect(try await again.people.profiles(["alice"]).first?.displayName == "Alice ✓")
    }

    @Test func memberListsShowNamesOrderByThemAndFollowChanges() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (carol, _) = try await server.client("carol")
        let (dave, _) = try await server.client("dave")
        try await bob.people.setProfile(displayName: "Zed")
        try await carol.people.setProfile(displayName: "anna", avatar: "file:7")
        // Joined after their profiles were set: the guild's home asks their homes for the copies.
        let (g, _) = try await guild(server, owner: alice, members: [bob, carol, dave])
        try await waitUntil("the newcomers' copies") {
            try await alice.members.page(of: g.serverID).members.map(\.userID) == ["alice", "carol", "dave", "bob"]
        }
        let page = try await alice.members.page(of: g.serverID, watch: true)
        #expect(page.members[1].displayName == "anna" && page.members[1].avatar == "file:7" && page.members[3].displayName == "Zed")
        // A change moves the member, and the window hears it.
        let (watcher, heard) = try await server.client("alice", device: "w")
        _ = try await watcher.members.page(of: g.serverID, watch: true)
        try await bob.people.setProfile(displayName: "Aaron")
        _ = try await waitFor("the window told") { heard.memberListUpdates.first { $0.member.userID == "bob" && $0.member.displayName == "Aaron" } }
        #expect(try await alice.members.page(of: g.serverID).members.map(\.userID) == ["alice", "bob", "carol", "dave"])
        // Copies are stored with the member: they survive a restart.
        try server.restart()
        let (again, _) = try await server.client("alice", device: "after")
        #expect(try await again.members.page(of: g.serverID).members.map(\.displayName) == ["", "Aaron", "anna", ""])
    }

    @Test func thoseWhoHearAUserHearTheirProfileChange() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, aliceHeard) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (peer, peerHeard) = try await server.client("carol")
        let (stranger, strangerHeard) = try await server.client("eve")
        _ = try await guild(server, owner: alice, members: [bob])
        _ = try await peer.directs.send("hi", to: "bob")
        try await bob.people.setProfile(displayName: "Bob B.")
        #expect(try await aliceHeard.notification(.userUpdated).user.displayName == "Bob B.", "a fellow member of a small server")
        #expect(try await peerHeard.notification(.userUpdated).user.userID == "bob", "a direct conversation's peer")
        // Eve watches no one; she hears only what she asks for.
        _ = try await stranger.people.watchPresence(["bob"])
        try await bob.people.setProfile(avatar: "file:9")
        #expect(try await strangerHeard.notification(.userUpdated).user.avatar == "file:9")
        #expect(strangerHeard.notifications.filter { $0.kind == .userUpdated }.count == 1)
    }

    @Test func nicknamesAreOwnOrManagedAndAudited() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobHeard) = try await server.client("bob")
        let (carol, _) = try await server.client("carol")
        let (g, _) = try await guild(server, owner: alice, members: [bob, carol])
        try await bob.people.setProfile(displayName: "Bob")
        #expect(try await bob.members.setNickname("bobby", in: g.serverID).nickname == "bobby")
        await expectError(.forbidden) { _ = try await bob.members.setNickname("carol2", in: g.serverID, of: "carol") }
        await expectError(.badRequest) { _ = try await bob.members.setNickname(String(repeating: "n", count: 65), in: g.serverID) }
        await expectError(.notFound) { _ = try await alice.members.setNickname("x", in: g.serverID, of: "nobody") }
        let renamed = try await alice.members.setNickname("B", in: g.serverID, of: "bob", reason: "shorter")
        #expect(renamed.nickname == "B" && renamed.displayName == "Bob")
        let told = try await waitFor("MEMBER_UPDATED") { bobHeard.notifications.first { $0.kind == .memberUpdated && $0.member.nickname == "B" } }
        #expect(told.actorID == "alice")
        let entry = try #require(try await alice.servers.auditLog(of: g.serverID, action: .auditMemberNicknameChanged).entries.first)
        #expect(entry.target == "bob" && entry.reason == "shorter" && entry.changes.first?.before == "\"bobby\"" && entry.changes.first?.after == "\"B\"")
        #expect(try await alice.servers.auditLog(of: g.serverID, actor: "bob").entries.isEmpty, "one's own nickname is not audited")
        #expect(try await alice.members.page(of: g.serverID).members.map(\.userID) == ["alice", "bob", "carol"])
    }
}

extension ProfileTests {
    /// An avatar uploaded to the server (docs/features.md "Profiles"): an image only,
    /// one's own upload only, a lasting link anyone shown the profile can fetch; replaced, its file is swept.
    @Test func anUploadedAvatarIsALastingLinkAndAReplacedOneIsSwept() async throws {
        let server = try TestServer { $0.wsListen = "127.0.0.1:0" }
        defer { server.stop() }
        server.update { $0.filesURL = "http://127.0.0.1:\(server.webSocketPort)" }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let image = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: UInt8(7), count: 40))
        await expectError(.badRequest) { _ = try await alice.files.createUpload("notes.txt", size: 5, contentType: "text/plain", to: .avatar) }
        let first = try await alice.files.upload(image, as: "me.png", contentType: "image/png", to: .avatar)
        let profile = try await alice.people.setProfile(avatarFileID: first)
        #expect(profile.avatar.hasPrefix("http://127.0.0.1:\(server.webSocketPort)/files/\(first)/me.png?u=avatar&"), "\(profile.avatar)")
        // Anyone shown it fetches it (bob asks for alice's profile).
        let shown = try #require(try await bob.people.profiles(["alice"]).first)
        #expect(shown.avatar == profile.avatar)
        #expect(try Curl.run([shown.avatar]).body == Array(image))
        // Only one's own avatar upload may be named; a channel's file, another's, or a missing one is refused.
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        let attachment = try await alice.files.upload(image, as: "shot.png", contentType: "image/png", to: .channel(c.channelID))
        await expectError(.notFound) { _ = try await alice.people.setProfile(avatarFileID: attachment) }
        await expectError(.notFound) { _ = try await bob.people.setProfile(avatarFileID: first) }
        await expectError(.notFound) { _ = try await alice.people.setProfile(avatarFileID: first + 999_999) }
        await expectError(.badRequest) {
            var r = GHSetProfile()
            r.avatar = "https://example.com/a.png"; r.avatarFileID = first
            _ = try await alice.call(.setProfile(r))
        }
        // Replaced by a URL: the old file goes with the next sweep (made due at once here), and its link with it.
        _ = try await alice.people.setProfile(avatar: "https://example.com/elsewhere.png")
        server.update {
            $0.fileGraceSeconds = 1
            $0.fileSweepSeconds = 1
        }
        try await waitUntil("the replaced avatar swept", timeout: 15) { try Curl.run([profile.avatar]).status == 404 }
    }

    /// A server's icon uploaded as a picture: MANAGE_SERVER only, an image only, a lasting link; replaced, its file is swept.
    @Test func anUploadedServerIconIsALastingLinkAndAReplacedOneIsSwept() async throws {
        let server = try TestServer { $0.wsListen = "127.0.0.1:0" }
        defer { server.stop() }
        server.update { $0.filesURL = "http://127.0.0.1:\(server.webSocketPort)" }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (g, _) = try await guild(server, owner: alice, members: [bob])
        let image = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: UInt8(9), count: 40))
        await expectError(.badRequest) { _ = try await alice.files.createUpload("notes.txt", size: 5, contentType: "text/plain", to: .serverIcon(g.serverID)) }
        await expectError(.forbidden) { _ = try await bob.files.createUpload("i.png", size: 48, contentType: "image/png", to: .serverIcon(g.serverID)) }
        let (carol, _) = try await server.client("carol")
        await expectError(.notFound) { _ = try await carol.files.createUpload("i.png", size: 48, contentType: "image/png", to: .serverIcon(g.serverID)) }
        let first = try await alice.files.upload(image, as: "guild.png", contentType: "image/png", to: .serverIcon(g.serverID))
        let updated = try await alice.servers.update(g.serverID, iconFileID: first)
        #expect(updated.icon.hasPrefix("http://127.0.0.1:\(server.webSocketPort)/files/\(first)/guild.png?u=avatar&"), "\(updated.icon)")
        #expect(try await bob.servers.get([g.serverID]).first?.icon == updated.icon)
        #expect(try Curl.run([updated.icon]).body == Array(image))
        // Only this server's icon upload may be named; an avatar upload or a missing file is refused, and not both fields.
        let avatar = try await alice.files.upload(image, as: "me.png", contentType: "image/png", to: .avatar)
        await expectError(.notFound) { _ = try await alice.servers.update(g.serverID, iconFileID: avatar) }
        await expectError(.notFound) { _ = try await alice.servers.update(g.serverID, iconFileID: first + 999_999) }
        await expectError(.badRequest) { _ = try await alice.servers.update(g.serverID, icon: "🎲", iconFileID: first) }
        // Replaced by an emoji: the picture goes with the next sweep, and its link with it.
        _ = try await alice.servers.update(g.serverID, icon: "🎲")
        server.update {
            $0.fileGraceSeconds = 1
            $0.fileSweepSeconds = 1
        }
        try await waitUntil("the replaced icon swept", timeout: 15) { try Curl.run([updated.icon]).status == 404 }
    }
}
