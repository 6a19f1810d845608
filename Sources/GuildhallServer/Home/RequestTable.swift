// The request table (docs/architecture.md): one row per request kind says
// where it runs (`RequestTarget`, from the ids the request names), its
// rate class, when a session may send it, the permission bit it needs with
// the server or channel where it is asked for, how the answers of every home
// merge, and the handler that carries it out at its home. One exhaustive
// switch, so a new request kind cannot be added without deciding all of them.
// The checks the table drives run once, before any handler: the phase and
// the rate class at the gateway (Connections.swift), routing by the target
// and merging (`HomeRoutes`), the permission and the handler at the home
// (`Home.route`). Pure: a row's handler runs only when the home calls it.
//
// Where a request runs is the plan the loops follow: a guild's requests go
// to the loop (or node) that owns the guild, found from the server or
// channel id the request names; per-user requests to the user's home (a
// direct conversation's to its lower user's); requests whose ids do not name
// a home go to every home, which answer in part; a session's own upkeep
// (heartbeat, acknowledgement, logout) stays on its gateway.

import GuildhallCore
import GuildhallWire

/// Where a request's ids lead (HomeRoutes carries it out).
enum RequestTarget: Equatable {
    /// The session's own gateway answers it: its liveness, acknowledgements, logout.
    case gateway
    /// The session's user's home.
    case user
    /// This gateway's own home: a new guild is made where it is asked for.
    case here
    case guild(ServerID)
    /// A channel's guild; a channel nobody announced is answered by the user's home (as not found).
    case channel(ChannelID)
    /// A channel's guild if announced, else every home (the id may name a conversation).
    case announcedChannel(ChannelID)
    case channels([ChannelID])
    case guilds([ServerID])
    /// The conversation between the session's user and this peer.
    case conversation(UserID)
    /// Every home answers in part (message UIDs, lists across guilds).
    case everyHome
}

/// How a request counts against a session's request budget.
enum RateClass: Equatable, CaseIterable {
    /// Keeping the session alive: heartbeats, acknowledgements, logout.
    case session
    /// Reads: lists, history, lookups.
    case query
    /// Changes to the directory, subscriptions and read state.
    case change
    /// Messages and receipts other users receive.
    case message
    /// Typing, throttled on its own (README "What clients receive").
    case typing
}

/// When in a session's life a request is allowed.
enum RequestPhase: Equatable {
    /// Only as the first request: it logs the connection in.
    case opensSession
    /// Only once logged in.
    case loggedIn
}

/// What carries a request out at its home: the handler of the row, with the
/// request it was made for. The session is logged in and the row's checks have passed.
typealias HomeHandler = (_ home: Home, _ id: UInt64, _ from: HomeSession) -> Void

struct RequestRule {
    let target: RequestTarget
    let rate: RateClass
    var phase: RequestPhase = .loggedIn
    /// The bit a member needs where the request applies (`scope`); checks
    /// that depend on the request's content (mentions, guest fields, the
    /// message asked about) are in its handler.
    var needs: Permission = []
    var scope: PermissionScope?
    /// How the answers of every home become one, when the target is every home.
    var merge: GatherMerge = .firstFound
    /// Nil for what the gateway answers itself (the session's own upkeep and its login).
    let handle: HomeHandler?

    init(_ target: RequestTarget, _ rate: RateClass, phase: RequestPhase = .loggedIn, needs: Permission = [], at scope: PermissionScope? = nil,
         merge: GatherMerge = .firstFound, handle: HomeHandler?) {
        self.target = target
        self.rate = rate
        self.phase = phase
        self.needs = needs
        self.scope = scope
        self.merge = merge
        self.handle = handle
    }
}

extension GHRequest.OneOf_Body {
    var rule: RequestRule {
        switch self {
        // The gateway answers these (Connections.swift).
        case .login, .resume: RequestRule(.user, .session, phase: .opensSession, handle: nil)
        case .heartbeat, .ack, .logout: RequestRule(.gateway, .session, handle: nil)

        // Servers, members, channels, roles (Home/Directory).
        case .createServer(let r): RequestRule(.here, .change) { $0.directoryRequests.createServer(r, id: $1, from: $2) }
        case .updateServer(let r):
            RequestRule(.guild(r.serverID), .change, needs: .manageServer, at: .server(r.serverID)) { $0.directoryRequests.updateServer(r, id: $1, from: $2) }
        case .deleteServer(let r): RequestRule(.guild(r.serverID), .change) { $0.directoryRequests.deleteServer(r, id: $1, from: $2) }
        case .transferOwnership(let r):
            RequestRule(.guild(r.serverID), .change) { $0.directoryRequests.transferOwnership(r, id: $1, from: $2) }
        case .getServers(let r): RequestRule(.everyHome, .query, merge: .servers(order: r.serverIds)) { $0.directoryRequests.getServers(r, id: $1, from: $2) }
        case .searchServers(let r):
            RequestRule(.everyHome, .query, merge: .serverDirectory(cursor: r.cursor, limit: r.limit == 0 ? Home.defaultSearchPage : Int(r.limit))) {
                home, id, s in attempt(id, s) { () throws(Failure) in
                    s.respond(id, .serverDirectory(try ServerDirectory.page(r, listed: home.directory.discoverableServers(), info: home.directoryRequests.info)))
                }
            }
        case .listMyServers: RequestRule(.everyHome, .query, merge: .servers(order: nil)) { $0.directoryRequests.listMyServers(id: $1, from: $2) }
        case .joinServer(let r): RequestRule(.guild(r.serverID), .change) { $0.directoryRequests.joinServer(r, id: $1, from: $2) }
        case .inviteMember(let r):
            RequestRule(.guild(r.serverID), .change, needs: .invite, at: .server(r.serverID)) { $0.directoryRequests.inviteMember(r, id: $1, from: $2) }
        case .acceptInvite(let r): RequestRule(.guild(r.serverID), .change) { $0.directoryRequests.acceptInvite(r, id: $1, from: $2) }
        case .leaveServer(let r): RequestRule(.guild(r.serverID), .change) { $0.directoryRequests.leaveServer(r, id: $1, from: $2) }
        case .kickMember(let r):
            RequestRule(.guild(r.serverID), .change, needs: .kick, at: .server(r.serverID)) { $0.directoryRequests.kickMember(r, id: $1, from: $2) }
        case .setMemberRole(let r):
            RequestRule(.guild(r.serverID), .change, needs: .manageRoles, at: .server(r.serverID)) { $0.permissionRequests.setMemberRole(r, id: $1, from: $2) }
        case .listMembers(let r): RequestRule(.guild(r.serverID), .query) { $0.memberLists.list(r, id: $1, from: $2) }
        case .createChannel(let r):
            RequestRule(.guild(r.serverID), .change, needs: .manageChannels, at: .server(r.serverID)) { $0.directoryRequests.createChannel(r, id: $1, from: $2) }
        case .updateChannel(let r):
            RequestRule(.channel(r.channelID), .change, needs: .manageChannels, at: .channel(r.channelID)) { $0.directoryRequests.updateChannel(r, id: $1, from: $2) }
        case .deleteChannel(let r):
            RequestRule(.channel(r.channelID), .change, needs: .manageChannels, at: .channel(r.channelID)) { $0.directoryRequests.deleteChannel(r, id: $1, from: $2) }
        case .listChannels(let r): RequestRule(.guild(r.serverID), .query) { $0.directoryRequests.listChannels(r, id: $1, from: $2) }
        case .enterAsGuest(let r): RequestRule(.guild(r.serverID), .change) { $0.directoryRequests.enterAsGuest(r, id: $1, from: $2) }
        case .leaveAsGuest(let r): RequestRule(.guild(r.serverID), .change) { $0.directoryRequests.leaveAsGuest(r, id: $1, from: $2) }
        case .banMember(let r): RequestRule(.guild(r.serverID), .change, needs: .ban, at: .server(r.serverID)) { $0.directoryRequests.banMember(r, id: $1, from: $2) }
        // Pins (Home/Messages/Pinboard).
        case .pinMessage(let r):
            RequestRule(.channel(r.channelID), .change, needs: .pinMessages, at: .channel(r.channelID)) { $0.pinboard.pin(r, id: $1, from: $2) }
        case .unpinMessage(let r):
            RequestRule(.channel(r.channelID), .change, needs: .pinMessages, at: .channel(r.channelID)) { $0.pinboard.unpin(r, id: $1, from: $2) }
        case .listPins(let r): RequestRule(.channel(r.channelID), .query) { $0.pinboard.list(r, id: $1, from: $2) }
        // Profiles (Home/People): each user's at its home; nicknames at the guild's.
        case .setProfile(let r): RequestRule(.user, .change) { $0.profiles.setProfile(r, id: $1, from: $2) }
        case .getUsers(let r): RequestRule(.everyHome, .query, merge: .users(order: r.userIds)) { $0.profiles.getUsers(r, id: $1, from: $2) }
        case .setNickname(let r): RequestRule(.guild(r.serverID), .change) { $0.profiles.setNickname(r, id: $1, from: $2) }
        // Push (Home/People/PushNotices): a device's token, kept at its user's home.
        case .registerPushToken(let r): RequestRule(.user, .change) { $0.pushNotices.register(r, id: $1, from: $2) }
        case .unregisterPushToken: RequestRule(.user, .change) { $0.pushNotices.unregister(id: $1, from: $2) }
        // Blocking (Home/Direct/Blocking): a mark on the conversation with the user blocked.
        case .blockUser(let r): RequestRule(.conversation(r.userID), .change) { $0.userHome.block(r, id: $1, from: $2) }
        case .unblockUser(let r): RequestRule(.conversation(r.userID), .change) { $0.userHome.unblock(r, id: $1, from: $2) }
        case .listBlockedUsers: RequestRule(.everyHome, .query, merge: .userIDs) { $0.userHome.listBlocked(id: $1, from: $2) }
        case .getAuditLog(let r):
            RequestRule(.guild(r.serverID), .query, needs: .viewAuditLog, at: .server(r.serverID)) { $0.auditTrail.getAuditLog(r, id: $1, from: $2) }
        case .timeoutMember(let r):
            RequestRule(.guild(r.serverID), .change, needs: .moderateMembers, at: .server(r.serverID)) { $0.moderation.timeoutMember(r, id: $1, from: $2) }
        case .unbanMember(let r):
            RequestRule(.guild(r.serverID), .change, needs: .ban, at: .server(r.serverID)) { $0.directoryRequests.unbanMember(r, id: $1, from: $2) }
        case .createRole(let r):
            RequestRule(.guild(r.serverID), .change, needs: .manageRoles, at: .server(r.serverID)) { $0.permissionRequests.createRole(r, id: $1, from: $2) }
        case .updateRole(let r):
            RequestRule(.guild(r.serverID), .change, needs: .manageRoles, at: .server(r.serverID)) { $0.permissionRequests.updateRole(r, id: $1, from: $2) }
        case .deleteRole(let r):
            RequestRule(.guild(r.serverID), .change, needs: .manageRoles, at: .server(r.serverID)) { $0.permissionRequests.deleteRole(r, id: $1, from: $2) }
        case .grantRole(let r):
            RequestRule(.guild(r.serverID), .change, needs: .manageRoles, at: .server(r.serverID)) { $0.permissionRequests.grantRole(r, id: $1, from: $2) }
        case .takeBackRole(let r):
            RequestRule(.guild(r.serverID), .change, needs: .manageRoles, at: .server(r.serverID)) { $0.permissionRequests.takeBackRole(r, id: $1, from: $2) }
        case .setPermissionOverride(let r):
            RequestRule(.guild(r.override.serverID), .change, needs: .manageRoles, at: .server(r.override.serverID)) {
                $0.permissionRequests.setPermissionOverride(r, id: $1, from: $2)
            }
        case .listRoles(let r): RequestRule(.guild(r.serverID), .query) { $0.permissionRequests.listRoles(r, id: $1, from: $2) }
        case .getPermissions(let r): RequestRule(.guild(r.serverID), .query) { $0.permissionRequests.getPermissions(r, id: $1, from: $2) }

        // Channel messages and what happens to them (Home/Messages). A plain
        // send is read from the frame's bytes and goes to the same handler
        // (Connections.swift, HomeRoutes.sendMessage).
        case .sendMessage(let r):
            RequestRule(.channel(r.channelID), .message, needs: .sendMessages, at: .channel(r.channelID)) { $0.sendMessage(SendRequest(r), id: $1, from: $2) }
        // A conversation's id is not a channel's: every home looks for it.
        case .getHistory(let r): RequestRule(.announcedChannel(r.channelID), .query) { $0.messageReads.getHistory(r, id: $1, from: $2) }
        case .getThread(let r): RequestRule(.announcedChannel(r.channelID), .query) { $0.messageReads.getThread(r, id: $1, from: $2) }
        case .getMessages(let r): RequestRule(.everyHome, .query, merge: .messages(order: r.uids)) { $0.messageReads.getMessages(r, id: $1, from: $2) }
        // A server's search at its guild's home; a conversation's wherever it is held (Home/Messages/MessageSearch).
        case .searchMessages(let r):
            RequestRule(r.serverID != 0 ? .guild(r.serverID) : .announcedChannel(r.conversationID), .query) { $0.messageReads.searchMessages(r, id: $1, from: $2) }
        // Files (Home/Files): an upload into a channel at its guild's home, into a conversation at the conversation's.
        case .createUpload(let r) where r.avatar: RequestRule(.user, .change) { $0.attachments.createUpload(r, id: $1, from: $2) }
        case .createUpload(let r) where r.serverIcon != 0:
            RequestRule(.guild(r.serverIcon), .change, needs: .manageServer, at: .server(r.serverIcon)) { $0.attachments.createUpload(r, id: $1, from: $2) }
        case .createUpload(let r) where r.conversationID != 0:
            RequestRule(.announcedChannel(r.conversationID), .change) { $0.attachments.createUpload(r, id: $1, from: $2) }
        case .createUpload(let r):
            if r.peerID.isEmpty {
                RequestRule(.channel(r.channelID), .change, needs: [.sendMessages, .attachFiles], at: .channel(r.channelID)) { $0.attachments.createUpload(r, id: $1, from: $2) }
            } else {
                RequestRule(.conversation(r.peerID), .change) { $0.attachments.createUpload(r, id: $1, from: $2) }
            }
        // Who may is decided per message (sender, window, RECALL_OTHERS, DELETE_OTHERS): MessageOperations.
        case .recallMessage(let r): RequestRule(.announcedChannel(r.channelID), .message) { $0.messageOperations.recall(r, id: $1, from: $2) }
        case .editMessage(let r): RequestRule(.announcedChannel(r.channelID), .message) { $0.messageOperations.edit(r, id: $1, from: $2) }
        case .deleteMessage(let r): RequestRule(.announcedChannel(r.channelID), .message) { $0.messageOperations.delete(r, id: $1, from: $2) }
        case .addReaction(let r): RequestRule(.announcedChannel(r.channelID), .message) { $0.messageOperations.addReaction(r, id: $1, from: $2) }
        case .removeReaction(let r): RequestRule(.announcedChannel(r.channelID), .message) { $0.messageOperations.removeReaction(r, id: $1, from: $2) }
        case .listReactors(let r): RequestRule(.announcedChannel(r.channelID), .query) { $0.messageOperations.listReactors(r, id: $1, from: $2) }
        case .sendTyping(let r) where r.conversationID != 0:
            RequestRule(.announcedChannel(r.conversationID), .typing) { $0.typing.sendDirectTyping(r, id: $1, from: $2) }
        case .sendTyping(let r) where !r.peerID.isEmpty: RequestRule(.conversation(r.peerID), .typing) { $0.typing.sendDirectTyping(r, id: $1, from: $2) }
        case .sendTyping(let r):
            RequestRule(.channel(r.channelID), .typing, needs: .sendMessages, at: .channel(r.channelID)) { $0.typing.sendTyping(r, id: $1, from: $2) }

        // Subscriptions (Home/Subscriptions): the guild's home keeps who is interested in its channels.
        case .subscribe(let r) where r.type == .userPresence:
            RequestRule(.user, .change) { $0.presences.subscribe(r, id: $1, from: $2) }
        case .subscribe(let r): RequestRule(.guilds(r.targets.map(\.serverID)), .change, merge: .subscribe) { $0.subscriptions.subscribe(r, id: $1, from: $2) }
        case .setSubscribeMode(let r): RequestRule(.everyHome, .change, merge: .ok) { $0.subscriptions.setSubscribeMode(r, id: $1, from: $2) }

        // Reading, receipts, received status (Home/Receipts).
        case .markRead(let r): RequestRule(.channel(r.channelID), .change) { $0.reading.markRead(r, id: $1, from: $2) }
        case .getUnread(let r): RequestRule(.channels(r.channelIds), .query, merge: .unreads(order: r.channelIds)) { $0.reading.getUnread(r, id: $1, from: $2) }
        case .requestReceipt(let r): RequestRule(.everyHome, .message) { $0.groupReceipts.requestReceipt(r, id: $1, from: $2) }
        case .respondReceipts(let r): RequestRule(.channel(r.channelID), .message) { $0.groupReceipts.respondReceipts(r, id: $1, from: $2) }
        case .getReceiptReaders(let r): RequestRule(.everyHome, .query) { $0.groupReceipts.getReceiptReaders(r, id: $1, from: $2) }
        case .getReceiptInfo(let r): RequestRule(.everyHome, .query, merge: .receipts) { $0.groupReceipts.getReceiptInfo(r, id: $1, from: $2) }
        // Received status: the user's home holds what was set, the homes of the messages what reading and delivery say.
        case .setReceivedStatus(let r): RequestRule(.user, .change) { $0.receivedStatuses.setReceivedStatus(r, id: $1, from: $2) }
        case .getReceivedStatus(let r): RequestRule(.everyHome, .query, merge: .receivedStatuses) { $0.receivedStatuses.getReceivedStatus(r, id: $1, from: $2) }

        // Direct conversations (Home/Direct).
        case .openConversation(let r): RequestRule(.conversation(r.peerID), .change) { $0.userHome.openConversation(r, id: $1, from: $2) }
        case .listConversations: RequestRule(.everyHome, .query, merge: .conversations) { $0.userHome.listConversations(id: $1, from: $2) }
        // Named by its id, a conversation is wherever it is held; by its peer, at the pair's home.
        case .sendDirectMessage(let r):
            RequestRule(r.conversationID != 0 ? .announcedChannel(r.conversationID) : .conversation(r.peerID), .message) {
                $0.userHome.sendDirectMessage(r, id: $1, from: $2)
            }
        case .markDelivered(let r): RequestRule(.everyHome, .change, merge: .ok) { $0.userHome.markDelivered(r, id: $1, from: $2) }
        case .sendReadReceipt(let r): RequestRule(.everyHome, .change) { $0.userHome.sendReadReceipt(r, id: $1, from: $2) }
        case .ackMessageRead(let r): RequestRule(.everyHome, .change) { $0.userHome.ackMessageRead(r, id: $1, from: $2) }
        case .ackConversationRead(let r): RequestRule(.everyHome, .change) { $0.userHome.ackConversationRead(r, id: $1, from: $2) }
        case .getSentStatus(let r): RequestRule(.everyHome, .query, merge: .sentStatuses) { $0.userHome.getSentStatus(r, id: $1, from: $2) }

        // Group conversations (Home/Direct/GroupConversations): made here with an id placed as a guild's, so the rest goes by it.
        case .createGroup(let r): RequestRule(.here, .change) { $0.userHome.createGroup(r, id: $1, from: $2) }
        case .updateGroup(let r): RequestRule(.guild(r.conversationID), .change) { $0.userHome.updateGroup(r, id: $1, from: $2) }
        case .addGroupMembers(let r): RequestRule(.guild(r.conversationID), .change) { $0.userHome.addGroupMembers(r, id: $1, from: $2) }
        case .removeGroupMember(let r): RequestRule(.guild(r.conversationID), .change) { $0.userHome.removeGroupMember(r, id: $1, from: $2) }
        case .leaveGroup(let r): RequestRule(.guild(r.conversationID), .change) { $0.userHome.leaveGroup(r, id: $1, from: $2) }
        // Whom one accepts direct messages from (Home/Direct/DirectPrivacy): kept at the user's home.
        case .setDmPrivacy(let r): RequestRule(.user, .change) { $0.directPrivacy.set(r, id: $1, from: $2) }
        case .getDmPrivacy: RequestRule(.user, .query) { $0.directPrivacy.get(id: $1, from: $2) }
        // Incoming webhooks (Home/Directory/Webhooks): at the channel's guild's home; their posts come through the web listener.
        case .createWebhook(let r):
            RequestRule(.channel(r.channelID), .change, needs: .manageWebhooks, at: .channel(r.channelID)) { $0.webhooks.create(r, id: $1, from: $2) }
        case .listWebhooks(let r):
            RequestRule(.channel(r.channelID), .query, needs: .manageWebhooks, at: .channel(r.channelID)) { $0.webhooks.list(r, id: $1, from: $2) }
        case .deleteWebhook(let r):
            RequestRule(.channel(r.channelID), .change, needs: .manageWebhooks, at: .channel(r.channelID)) { $0.webhooks.delete(r, id: $1, from: $2) }

        // Invite links (Home/Directory/InviteLinks): a request naming only a code is asked of every home; the one holding it answers.
        case .createInviteCode(let r):
            RequestRule(.guild(r.serverID), .change, needs: .createInvites, at: .server(r.serverID)) { $0.inviteLinks.create(r, id: $1, from: $2) }
        case .listInviteCodes(let r): RequestRule(.guild(r.serverID), .query) { $0.inviteLinks.list(r, id: $1, from: $2) }
        case .revokeInviteCode(let r): RequestRule(.everyHome, .change) { $0.inviteLinks.revoke(r, id: $1, from: $2) }
        case .lookUpInvite(let r): RequestRule(.everyHome, .query) { $0.inviteLinks.lookUp(r, id: $1, from: $2) }
        case .joinByInvite(let r): RequestRule(.everyHome, .change) { $0.inviteLinks.join(r, id: $1, from: $2) }

        // Presence (Home/People): decided at the user's home.
        case .setPresence(let r): RequestRule(.user, .change) { $0.presences.setPresence(r, id: $1, from: $2) }
        case .setIdle(let r): RequestRule(.user, .change) { $0.presences.setIdle(r, id: $1, from: $2) }
        }
    }
}
