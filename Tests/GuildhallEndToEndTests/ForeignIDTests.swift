// RELIABILITY A4 as a table: for every request kind that names an id, a
// caller who may not see a real server, channel, message or conversation is
// answered exactly as for one that does not exist: same code, same message
// (with the id itself left out of the comparison).

import Foundation
import GuildhallClient
import GuildhallWire
import SwiftProtobuf
import Testing

@Suite struct ForeignIDTests {
    /// What alice owns and eve may not see, or made-up ids of the same kind.
    struct IDs {
        var server: UInt64, channel: UInt64, message: UInt64, conversation: UInt64, directMessage: UInt64
    }

    /// Every request kind that names an id, made for `ids`.
    func requests(_ i: IDs) -> [(String, GHRequest.OneOf_Body)] {
        func make<M: SwiftProtobuf.Message>(_ m: M, _ fill: (inout M) -> Void) -> M {
            var m = m
            fill(&m)
            return m
        }
        let bits = make(GHPermissionBits()) { $0.allow = GHPermission.sendMessages.bits }
        return [
            ("updateServer", .updateServer(make(GHUpdateServer()) { $0.serverID = i.server; $0.name = "x" })),
            ("deleteServer", .deleteServer(make(GHDeleteServer()) { $0.serverID = i.server })),
            ("getServers", .getServers(make(GHGetServers()) { $0.serverIds = [i.server] })),
            ("joinServer", .joinServer(make(GHJoinServer()) { $0.serverID = i.server })),
            ("inviteMember", .inviteMember(make(GHInviteMember()) { $0.serverID = i.server; $0.userID = "zed" })),
            ("acceptInvite", .acceptInvite(make(GHAcceptInvite()) { $0.serverID = i.server })),
            ("leaveServer", .leaveServer(make(GHLeaveServer()) { $0.serverID = i.server })),
            ("kickMember", .kickMember(make(GHKickMember()) { $0.serverID = i.server; $0.userID = "alice" })),
            ("setMemberRole", .setMemberRole(make(GHSetMemberRole()) { $0.serverID = i.server; $0.userID = "alice"; $0.role = .admin })),
            ("listMembers", .listMembers(make(GHListMembers()) { $0.serverID = i.server })),
            ("createChannel", .createChannel(make(GHCreateChannel()) { $0.serverID = i.server; $0.name = "x" })),
            ("updateChannel", .updateChannel(make(GHUpdateChannel()) { $0.channelID = i.channel; $0.name = "x" })),
            ("deleteChannel", .deleteChannel(make(GHDeleteChannel()) { $0.channelID = i.channel })),
            ("listChannels", .listChannels(make(GHListChannels()) { $0.serverID = i.server })),
            ("sendMessage", .sendMessage(make(GHSendMessage()) { $0.channelID = i.channel; $0.body.text = "x" })),
            ("getHistory channel", .getHistory(make(GHGetHistory()) { $0.channelID = i.channel })),
            ("getHistory conversation", .getHistory(make(GHGetHistory()) { $0.channelID = i.conversation })),
            ("getMessages", .getMessages(make(GHGetMessages()) { $0.uids = [i.message, i.directMessage] })),
            ("setReceivedStatus", .setReceivedStatus(make(GHSetReceivedStatus()) { $0.messageUids = [i.message]; $0.isRead = true })),
            ("getReceivedStatus", .getReceivedStatus(make(GHGetReceivedStatus()) { $0.messageUids = [i.message] })),
            ("requestReceipt", .requestReceipt(make(GHRequestReceipt()) { $0.messageUid = i.message })),
            ("respondReceipts", .respondReceipts(make(GHRespondReceipts()) { $0.channelID = i.channel; $0.messageUids = [i.message] })),
            ("getReceiptReaders", .getReceiptReaders(make(GHGetReceiptReaders()) { $0.messageUid = i.message })),
            ("getReceiptInfo", .getReceiptInfo(make(GHGetReceiptInfo()) { $0.messageUids = [i.message] })),
            ("subscribe server", .subscribe(make(GHSubscribe()) {
                $0.type = .serverMsg
                $0.targets = [make(GHSubscriptionTarget()) { $0.serverID = i.server }]
            })),
            ("subscribe channel", .subscribe(make(GHSubscribe()) {
                $0.type = .channelMsg
                $0.targets = [make(GHSubscriptionTarget()) { $0.serverID = i.server; $0.channelID = i.channel }]
            })),
            ("markRead", .markRead(make(GHMarkRead()) { $0.channelID = i.channel; $0.seq = 1 })),
            ("getUnread", .getUnread(make(GHGetUnread()) { $0.channelIds = [i.channel] })),
            ("sendTyping", .sendTyping(make(GHSendTyping()) { $0.channelID = i.channel })),
            ("enterAsGuest", .enterAsGuest(make(GHEnterAsGuest()) { $0.serverID = i.server })),
            ("leaveAsGuest", .leaveAsGuest(make(GHLeaveAsGuest()) { $0.serverID = i.server })),
            ("banMember", .banMember(make(GHBanMember()) { $0.serverID = i.server; $0.userID = "zed" })),
            ("unbanMember", .unbanMember(make(GHUnbanMember()) { $0.serverID = i.server; $0.userID = "zed" })),
            ("markDelivered", .markDelivered(make(GHMarkDelivered()) { $0.messageUids = [i.directMessage] })),
            ("sendReadReceipt", .sendReadReceipt(make(GHSendReadReceipt()) { $0.conversationID = i.conversation })),
            ("ackMessageRead", .ackMessageRead(make(GHAckMessageRead()) { $0.messageUid = i.directMessage })),
            ("ackConversationRead", .ackConversationRead(make(GHAckConversationRead()) { $0.conversationID = i.conversation })),
            ("getSentStatus", .getSentStatus(make(GHGetSentStatus()) { $0.messageUids = [i.directMessage] })),
            ("createRole", .createRole(make(GHCreateRole()) { $0.serverID = i.server; $0.name = "x"; $0.position = 1 })),
            ("updateRole", .updateRole(make(GHUpdateRole()) { $0.serverID = i.server; $0.roleID = 1; $0.name = "x" })),
            ("deleteRole", .deleteRole(make(GHDeleteRole()) { $0.serverID = i.server; $0.roleID = 1 })),
            ("grantRole", .grantRole(make(GHGrantRole()) { $0.serverID = i.server; $0.userID = "alice"; $0.roleID = 1 })),
            ("takeBackRole", .takeBackRole(make(GHTakeBackRole()) { $0.serverID = i.server; $0.userID = "alice"; $0.roleID = 1 })),
            ("setPermissionOverride", .setPermissionOverride(make(GHSetPermissionOverride()) {
                $0.override.serverID = i.server; $0.override.channelID = i.channel; $0.override.userID = "alice"; $0.override.permissions = bits
            })),
            ("listRoles", .listRoles(make(GHListRoles()) { $0.serverID = i.server })),
            ("getPermissions", .getPermissions(make(GHGetPermissions()) { $0.serverID = i.server; $0.channelID = i.channel })),
        ]
    }

    /// The answer as text, with `ids` written as "ID".
    func answer(_ c: GuildhallClient, _ body: GHRequest.OneOf_Body, hiding ids: IDs) async -> String {
        var text: String
        do {
            text = "ok \(try await c.call(body))"
        } catch let e as GuildhallError {
            text = "error \(e.code.rawValue) \(e.message)"
        } catch {
            text = "failed \(error)"
        }
        for id in [ids.server, ids.channel, ids.message, ids.conversation, ids.directMessage] {
            text = text.replacingOccurrences(of: String(id), with: "ID")
        }
        return text
    }

    @Test func whatACallerMayNotSeeIsAnsweredExactlyAsWhatDoesNotExist() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (carol, _) = try await server.client("carol")
        let (eve, _) = try await server.client("eve")
        let g = try await alice.createServer(name: "Private", openJoin: false)
        let c = try await alice.createChannel(in: g.serverID, name: "secret")
        let m = try await alice.send("for members only", to: c.channelID, needReceipt: true)
        let dm = try await alice.sendDirect("hi carol", to: "carol")
        _ = carol
        let real = IDs(server: g.serverID, channel: c.channelID, message: m.uid, conversation: dm.channelID, directMessage: dm.uid)
        // Made-up ids of the same shapes: a server id (no such server), and UIDs past any issued.
        let fake = IDs(server: g.serverID ^ 0x5A5A, channel: c.channelID + 7_777, message: m.uid + 9_999_999,
                       conversation: dm.channelID + 8_888, directMessage: dm.uid + 9_999_998)
        var differing: [String] = []
        for ((name, foreign), (_, missing)) in zip(requests(real), requests(fake)) {
            let a = await answer(eve, foreign, hiding: real), b = await answer(eve, missing, hiding: fake)
            if a != b { differing.append("\(name): foreign \(a) | missing \(b)") }
        }
        #expect(differing.isEmpty, "\(differing.count) kinds differ:\n\(differing.joined(separator: "\n"))")
    }

    /// A member who may not view a channel gets the same answers about it as about a channel that does not exist.
    @Test func aChannelAMemberMayNotViewIsAnsweredAsOneThatDoesNotExist() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (eve, _) = try await server.client("eve")
        let g = try await alice.createServer(name: "Guild")
        _ = try await eve.joinServer(g.serverID)
        let c = try await alice.createChannel(in: g.serverID, name: "staff")
        let m = try await alice.send("staff only", to: c.channelID, needReceipt: true)
        _ = try await alice.setOverride(in: g.serverID, channel: c.channelID, role: 0, GHPermissionBits(deny: [.viewChannel]))
        let other = try await alice.createChannel(in: g.serverID, name: "lobby")
        _ = other
        let real = IDs(server: g.serverID, channel: c.channelID, message: m.uid, conversation: 1, directMessage: 1)
        let fake = IDs(server: g.serverID, channel: c.channelID + 7_777, message: m.uid + 9_999_999, conversation: 1, directMessage: 1)
        let channelKinds: Set = ["updateChannel", "deleteChannel", "sendMessage", "getHistory channel", "getMessages", "setReceivedStatus",
                                 "requestReceipt", "respondReceipts", "getReceiptReaders", "getReceiptInfo", "subscribe channel", "markRead",
                                 "getUnread", "sendTyping"]
        var differing: [String] = []
        for ((name, hidden), (_, missing)) in zip(requests(real), requests(fake)) where channelKinds.contains(name) {
            let a = await answer(eve, hidden, hiding: real), b = await answer(eve, missing, hiding: fake)
            if a != b { differing.append("\(name): hidden \(a) | missing \(b)") }
        }
        #expect(differing.isEmpty, "\(differing.count) kinds differ:\n\(differing.joined(separator: "\n"))")
    }

    /// Received status is kept only for messages the caller may read; nothing of a refused call is stored.
    @Test func setReceivedStatusRefusesMessagesTheCallerCannotReadOrThatDoNotExist() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (eve, _) = try await server.client("eve")
        let g = try await alice.createServer(name: "Private", openJoin: false)
        let c = try await alice.createChannel(in: g.serverID, name: "secret")
        let m = try await alice.send("for members only", to: c.channelID)
        let own = try await eve.sendDirect("hi alice", to: "alice")
        for uid in [m.uid, m.uid + 9_999_999] {
            do {
                _ = try await eve.setReceivedStatus([own.uid, uid], read: true)
                Issue.record("stored flags on message \(uid)")
            } catch let e as GuildhallError {
                #expect(e.code == .notFound && e.message == "message \(uid) not found")
            }
        }
        #expect(try await eve.receivedStatus([m.uid, own.uid]).map(\.isRead) == [false, false], "nothing of the refused calls was kept")
        #expect(try await eve.setReceivedStatus([own.uid], read: true).map(\.isRead) == [true])
        #expect(try await alice.setReceivedStatus([m.uid], listened: true).map(\.isListened) == [true])
    }
}
