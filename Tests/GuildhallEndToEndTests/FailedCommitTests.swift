// A change that could not be stored changes nothing (docs/architecture.md; the Proto:
// "503 when it could not be stored (nothing was changed)"): with the data
// folder on a full disk, every state-changing directory request is answered
// 503 and no read shows it, and once the disk has room again the same
// requests succeed (not 404 because memory already showed them done).

import CPowerLoss
import Foundation
import Testing
import GuildhallClient
import GuildhallWire
@testable import GuildhallServer

/// A full disk under one data folder: the test SQLite VFS (Tests/CPowerLoss),
/// the process's default once installed, answers every write and growth of
/// the files there with SQLITE_FULL, as SQLite's own VFS answers ENOSPC, and
/// passes everything else through. Unlike a real full disk it refuses at once
/// even writes that would fit in room the WAL file already has, so each
/// request's refusal is certain (docs/reliability.md D4 fills a real tmpfs).
enum FullDisk {
    static func install() { _ = powerloss_install() }
    static func fill(_ folder: String) { powerloss_full(folder) }
    static func free(_ folder: String) { powerloss_room(folder) }
}

@Suite(.serialized) struct FailedCommitTests {
    /// A server whose data folder the test fills (FullDisk.fill) and frees.
    func fillableServer() throws -> TestServer {
        FullDisk.install()
        return try TestServer()
    }

    /// Fills the disk once what was answered is in SQLite, not only in the
    /// journal (LocalJournal.swift): a history read waits for that. A record
    /// caught between the two would wait for the disk, and reads go on without
    /// it meanwhile, which these tests' "as it was" would take for a change.
    func fill(_ server: TestServer, once reader: GuildhallClient, reads channel: UInt64) async throws {
        _ = try await reader.messages.history(of: channel, limit: 1)
        FullDisk.fill(server.folder)
    }

    @Test func everyDirectoryChangeThatCouldNotBeStoredChangesNothing() async throws {
        let server = try fillableServer()
        defer {
            FullDisk.free(server.folder)
            server.stop()
        }
        let (alice, _) = try await server.client("alice")
        let (bob, bobHears) = try await server.client("bob")
        let (carol, _) = try await server.client("carol")
        let (dave, _) = try await server.client("dave")
        let (erin, _) = try await server.client("erin")
        let (frank, _) = try await server.client("frank")
        let (g, c) = try await guild(server, owner: alice, members: [bob, carol])
        let s = g.serverID
        let scratch = try await alice.channels.create(in: s, name: "scratch")
        let mods = try await alice.roles.create(in: s, name: "mods", position: 3, permissions: GHPermissionBits(allow: [.sendMessages]))
        let spare = try await alice.roles.create(in: s, name: "spare", position: 2, permissions: GHPermissionBits(allow: [.sendMessages]))
        _ = try await alice.roles.grant(mods.roleID, to: "carol", in: s)
        try await alice.servers.invite("erin", to: s)
        try await alice.members.ban("frank", from: s)
        let pad = try await alice.servers.create(name: "pad")

        try await fill(server, once: alice, reads: c.channelID)
        await expectError(.unavailable) { _ = try await alice.messages.send("full", to: scratch.channelID) }
        let heardBefore = bobHears.notifications.count

        let servers = try await alice.servers.mine().map(\.serverID)
        let channels = try await alice.channels.list(of: s)
        let members = try await alice.members.list(of: s)
        let roles = try await alice.roles.list(of: s)
        func unchanged(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            #expect(try await alice.servers.mine().map(\.serverID) == servers, "\(what): my servers", sourceLocation: sourceLocation)
            #expect(try await alice.servers.get([s]).map(\.name) == ["Guild"], "\(what): the server", sourceLocation: sourceLocation)
            #expect(try await alice.channels.list(of: s) == channels, "\(what): channels", sourceLocation: sourceLocation)
            #expect(try await alice.members.list(of: s) == members, "\(what): members", sourceLocation: sourceLocation)
            #expect(try await alice.roles.list(of: s) == roles, "\(what): roles and overrides", sourceLocation: sourceLocation)
            #expect(try await bob.channels.list(of: s) == channels, "\(what): what bob sees", sourceLocation: sourceLocation)
        }

        await expectError(.unavailable) { _ = try await alice.servers.create(name: "Another") }
        try await unchanged("create_server")
        await expectError(.unavailable) { _ = try await alice.servers.update(s, name: "Renamed") }
        try await unchanged("update_server")
        await expectError(.unavailable) { _ = try await alice.channels.create(in: s, name: "new") }
        try await unchanged("create_channel")
        await expectError(.unavailable) { _ = try await alice.channels.update(c.channelID, name: "renamed") }
        try await unchanged("update_channel")
        await expectError(.unavailable) { try await alice.channels.delete(c.channelID) }
        try await unchanged("delete_channel")
        await expectError(.unavailable) { try await bob.servers.leave(s) }
        try await unchanged("leave_server")
        await expectError(.unavailable) { try await alice.members.kick("carol", from: s) }
        try await unchanged("kick_member")
        await expectError(.unavailable) { _ = try await dave.servers.join(s) }
        try await unchanged("join_server")
        #expect(try await dave.servers.mine().isEmpty)
        await expectError(.unavailable) { try await alice.servers.invite("dave", to: s) }
        try await unchanged("invite_member")
        await expectError(.notFound) { _ = try await dave.servers.acceptInvite(s) }
        await expectError(.unavailable) { _ = try await erin.servers.acceptInvite(s) }
        try await unchanged("accept_invite")
        await expectError(.unavailable) { try await alice.members.ban("bob", from: s) }
        try await unchanged("ban_member")
        await expectError(.unavailable) { try await alice.members.unban("frank", from: s) }
        try await unchanged("unban_member")
        await expectError(.forbidden) { _ = try await frank.servers.join(s) }
        await expectError(.unavailable) { _ = try await alice.members.setRole(.admin, of: "bob", in: s) }
        try await unchanged("set_member_role")
        await expectError(.unavailable) { _ = try await alice.roles.create(in: s, name: "more", position: 4, permissions: GHPermissionBits()) }
        try await unchanged("create_role")
        await expectError(.unavailable) { _ = try await alice.roles.update(mods.roleID, in: s, name: "moderators") }
        try await unchanged("update_role")
        await expectError(.unavailable) { try await alice.roles.delete(spare.roleID, in: s) }
        try await unchanged("delete_role")
        await expectError(.unavailable) { _ = try await alice.roles.grant(mods.roleID, to: "bob", in: s) }
        try await unchanged("grant_role")
        await expectError(.unavailable) { _ = try await alice.roles.takeBack(mods.roleID, from: "carol", in: s) }
        try await unchanged("take_back_role")
        await expectError(.unavailable) {
            _ = try await alice.roles.setOverride(in: s, channel: c.channelID, user: "bob", GHPermissionBits(deny: [.viewChannel]))
        }
        try await unchanged("set_permission_override")
        await expectError(.unavailable) { try await alice.servers.delete(s) }
        try await unchanged("delete_server")
        // Nobody was told of a change that was not made (bob, a member, targeted by several of them).
        #expect(bobHears.notifications.count == heardBefore)

        // Room again: the refused changes are made, none answered 404 as if done already.
        FullDisk.free(server.folder)
        try await waitUntil("the store writes again", timeout: 20) {
            (try? await alice.messages.send("back", to: scratch.channelID)) != nil
        }
        try await bob.servers.leave(s)
        try await alice.members.kick("carol", from: s)
        _ = try await erin.servers.acceptInvite(s)
        try await alice.members.unban("frank", from: s)
        #expect(try await alice.members.list(of: s).map(\.userID).sorted() == ["alice", "erin"])
        try await alice.servers.delete(s)
        await expectError(.notFound) { _ = try await alice.channels.list(of: s) }
        #expect(try await alice.servers.mine().map(\.serverID) == [pad.serverID])
    }

    /// Reading, receipts, received status and direct conversations: each
    /// kind refused on a full disk leaves every read as it was, and succeeds
    /// once there is room.
    @Test func everyReadingAndReceiptChangeThatCouldNotBeStoredChangesNothing() async throws {
        let server = try fillableServer()
        defer {
            FullDisk.free(server.folder)
            server.stop()
        }
        let (alice, _) = try await server.client("alice")
        // bob's SDK does not say deliveries by itself: the test says them.
        var options = ClientOptions(token: server.token("bob"))
        options.deliveryReceipts = false
        let bob = GuildhallClient(port: server.port, options: options)
        try await bob.connect()
        defer { bob.close() }
        let (carol, _) = try await server.client("carol")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        let one = try await alice.messages.send("one", to: c.channelID, needReceipt: true)
        let two = try await alice.messages.send("two", to: c.channelID)
        let dm = try await alice.directs.send("hi bob", to: "bob")
        let conversation = dm.channelID

        try await fill(server, once: alice, reads: c.channelID)
        await expectError(.unavailable) { _ = try await alice.messages.send("full", to: c.channelID) }
        func unchanged(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            #expect(try await bob.messages.unread([c.channelID]).map(\.unreadCount) == [2], "\(what): bob's unread", sourceLocation: sourceLocation)
            let receipts = try await alice.receipts.info([one.uid, two.uid])
            #expect(receipts.map(\.requested) == [true, false] && receipts[0].readerCount == 0, "\(what): receipts", sourceLocation: sourceLocation)
            #expect(try await bob.messages.receivedStatus([one.uid]).map(\.isListened) == [false], "\(what): received status", sourceLocation: sourceLocation)
            #expect(try await alice.directs.sentStatus([dm.uid]) == [.sent], "\(what): the sent status", sourceLocation: sourceLocation)
            #expect(try await bob.directs.list().map { [$0.conversationID, $0.unreadCount] } == [[conversation, 1]],
                    "\(what): bob's conversations", sourceLocation: sourceLocation)
            #expect(try await carol.directs.list().isEmpty, "\(what): carol's conversations", sourceLocation: sourceLocation)
        }
        try await unchanged("before")
        await expectError(.unavailable) { _ = try await bob.messages.markRead(c.channelID) }
        try await unchanged("mark_read")
        await expectError(.unavailable) { _ = try await bob.receipts.respond(channel: c.channelID, [one.uid]) }
        try await unchanged("respond_receipts")
        await expectError(.unavailable) { _ = try await alice.receipts.request(two.uid) }
        try await unchanged("request_receipt")
        await expectError(.unavailable) { _ = try await bob.messages.setReceivedStatus([one.uid], listened: true) }
        try await unchanged("set_received_status")
        await expectError(.unavailable) { _ = try await bob.call(.markDelivered(GHMarkDelivered.with { $0.messageUids = [dm.uid] })) }
        try await unchanged("mark_delivered")
        await expectError(.unavailable) { try await bob.directs.ackMessageRead(dm.uid) }
        try await unchanged("ack_message_read")
        await expectError(.unavailable) { _ = try await bob.directs.sendReadReceipt(conversation: conversation) }
        try await unchanged("send_read_receipt")
        await expectError(.unavailable) { _ = try await bob.directs.ackConversationRead(conversation) }
        try await unchanged("ack_conversation_read")
        await expectError(.unavailable) { _ = try await bob.directs.open(with: "carol") }
        try await unchanged("open_conversation")
        await expectError(.unavailable) { _ = try await bob.directs.send("hi carol", to: "carol") }
        try await unchanged("send_direct_message to a new peer")

        // Room again: each is made.
        FullDisk.free(server.folder)
        try await waitUntil("the store writes again", timeout: 20) {
            (try? await alice.messages.send("back", to: c.channelID)) != nil
        }
        _ = try await bob.call(.markDelivered(GHMarkDelivered.with { $0.messageUids = [dm.uid] }))
        #expect(try await alice.directs.sentStatus([dm.uid]) == [.delivered])
        try await bob.directs.ackMessageRead(dm.uid)
        #expect(try await alice.directs.sentStatus([dm.uid]) == [.read])
        #expect(try await bob.directs.ackConversationRead(conversation).unreadCount == 0)
        #expect(try await bob.receipts.respond(channel: c.channelID, [one.uid]).first?.responded == true)
        #expect(try await alice.receipts.request(two.uid).requested)
        #expect(try await alice.receipts.info([one.uid])[0].readerCount == 1)
        #expect(try await bob.messages.setReceivedStatus([one.uid], listened: true).map(\.isListened) == [true])
        #expect(try await bob.messages.markRead(c.channelID).unreadCount == 0)
        let opened = try await bob.directs.open(with: "carol")
        #expect(try await carol.directs.list().map(\.conversationID) == [opened.conversationID])
    }
}
