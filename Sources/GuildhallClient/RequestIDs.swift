// Every request kind that names a server, channel, message or conversation,
// made for a given set of ids: docs/reliability.md A4's table. A caller who may not
// see an id must be answered exactly as for an id that does not exist, for
// every kind here; the end-to-end tests and `guildhall-lab reliability` (A4) go
// through it. A new request kind that names an id belongs here.

import GuildhallWire

/// A server, channel, message, conversation, group conversation and direct message id: real ones, or made-up ones of the same shapes.
public struct RequestIDs: Sendable {
    public var server: UInt64, channel: UInt64, message: UInt64, conversation: UInt64, directMessage: UInt64
    public var group: UInt64

    /// `group`: the pair's conversation when not given.
    public init(server: UInt64, channel: UInt64, message: UInt64, conversation: UInt64, directMessage: UInt64, group: UInt64? = nil) {
        self.server = server; self.channel = channel; self.message = message; self.conversation = conversation; self.directMessage = directMessage
        self.group = group ?? conversation
    }

    /// Every one of them, for hiding them from an answer's text.
    public var all: [UInt64] { [server, channel, message, conversation, directMessage, group] }

    /// Every request kind that names an id, made for these ids, with its name.
    public var requests: [(String, GHRequest.OneOf_Body)] {
        let i = self
        func make<M>(_ m: M, _ fill: (inout M) -> Void) -> M {
            var m = m
            fill(&m)
            return m
        }
        let bits = make(GHPermissionBits()) { $0.allow = GHPermission.sendMessages.bits }
        return [
            ("updateServer", .updateServer(make(GHUpdateServer()) { $0.serverID = i.server; $0.name = "x" })),
            ("deleteServer", .deleteServer(make(GHDeleteServer()) { $0.serverID = i.server })),
            ("createInviteCode server", .createInviteCode(make(GHCreateInviteCode()) { $0.serverID = i.server })),
            ("createInviteCode channel", .createInviteCode(make(GHCreateInviteCode()) { $0.serverID = i.server; $0.channelID = i.channel })),
            ("timeoutMember", .timeoutMember(make(GHTimeoutMember()) { $0.serverID = i.server; $0.userID = "alice"; $0.until = 1 })),
            ("pinMessage", .pinMessage(make(GHPinMessage()) { $0.channelID = i.channel; $0.messageUid = i.message })),
            ("unpinMessage", .unpinMessage(make(GHUnpinMessage()) { $0.channelID = i.channel; $0.messageUid = i.message })),
            ("listPins", .listPins(make(GHListPins()) { $0.channelID = i.channel })),
            ("getAuditLog", .getAuditLog(make(GHGetAuditLog()) { $0.serverID = i.server })),
            ("setNickname", .setNickname(make(GHSetNickname()) { $0.serverID = i.server; $0.nickname = "x" })),
            ("listInviteCodes", .listInviteCodes(make(GHListInviteCodes()) { $0.serverID = i.server })),
            ("transferOwnership", .transferOwnership(make(GHTransferOwnership()) { $0.serverID = i.server; $0.userID = "zed" })),
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
            ("searchMessages server", .searchMessages(make(GHSearchMessages()) { $0.serverID = i.server; $0.query = "x" })),
            ("searchMessages channel", .searchMessages(make(GHSearchMessages()) { $0.serverID = i.server; $0.channelID = i.channel; $0.query = "x" })),
            ("searchMessages conversation", .searchMessages(make(GHSearchMessages()) { $0.conversationID = i.conversation; $0.query = "x" })),
            ("getMessages", .getMessages(make(GHGetMessages()) { $0.uids = [i.message, i.directMessage] })),
            ("setReceivedStatus", .setReceivedStatus(make(GHSetReceivedStatus()) { $0.messageUids = [i.message]; $0.isRead = true })),
            ("getReceivedStatus", .getReceivedStatus(make(GHGetReceivedStatus()) { $0.messageUids = [i.message] })),
            ("requestReceipt", .requestReceipt(make(GHRequestReceipt()) { $0.messageUid = i.message })),
            ("respondReceipts", .respondReceipts(make(GHRespondReceipts()) { $0.channelID = i.channel; $0.messageUids = [i.message] })),
            ("listReactors channel", .listReactors(make(GHListReactors()) { $0.channelID = i.channel; $0.messageUid = i.message; $0.type = 1 })),
            ("listReactors conversation", .listReactors(make(GHListReactors()) { $0.channelID = i.conversation; $0.messageUid = i.directMessage; $0.type = 1 })),
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
            ("subscribe guest server", .subscribe(make(GHSubscribe()) {
                $0.type = .guestServer
                $0.targets = [make(GHSubscriptionTarget()) { $0.serverID = i.server }]
            })),
            ("subscribe guest channel", .subscribe(make(GHSubscribe()) {
                $0.type = .guestChannel
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
            ("sendDirectMessage conversation", .sendDirectMessage(make(GHSendDirectMessage()) { $0.conversationID = i.conversation; $0.body.text = "x" })),
            ("sendDirectMessage group", .sendDirectMessage(make(GHSendDirectMessage()) { $0.conversationID = i.group; $0.body.text = "x" })),
            ("sendTyping group", .sendTyping(make(GHSendTyping()) { $0.conversationID = i.group })),
            ("getHistory group", .getHistory(make(GHGetHistory()) { $0.channelID = i.group })),
            ("sendReadReceipt group", .sendReadReceipt(make(GHSendReadReceipt()) { $0.conversationID = i.group })),
            ("updateGroup", .updateGroup(make(GHUpdateGroupConversation()) { $0.conversationID = i.group; $0.name = "x" })),
            ("addGroupMembers", .addGroupMembers(make(GHAddGroupMembers()) { $0.conversationID = i.group; $0.userIds = ["zed"] })),
            ("removeGroupMember", .removeGroupMember(make(GHRemoveGroupMember()) { $0.conversationID = i.group; $0.userID = "zed" })),
            ("leaveGroup", .leaveGroup(make(GHLeaveGroupConversation()) { $0.conversationID = i.group })),
            ("createWebhook", .createWebhook(make(GHCreateWebhook()) { $0.channelID = i.channel; $0.name = "x" })),
            ("listWebhooks", .listWebhooks(make(GHListWebhooks()) { $0.channelID = i.channel })),
            ("deleteWebhook", .deleteWebhook(make(GHDeleteWebhook()) { $0.channelID = i.channel; $0.webhookID = i.message })),
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
}
