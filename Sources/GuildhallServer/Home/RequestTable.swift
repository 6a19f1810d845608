// The request table (docs/architecture.md): one row per request kind says
// where it runs (`RequestTarget`, from the ids the request names), its
// rate class, when a session may send it, and the permission bit it needs
// with the server or channel where it is asked for. One exhaustive switch,
// so a new request kind cannot be added without deciding all of them.
// The checks the table drives run once, before any handler: the phase and
// the rate class at the gateway (Connections.swift), routing by the target
// (`HomeRoutes`), the permission at the guild's home (`Home.route`). Pure.
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

struct RequestRule: Equatable {
    let target: RequestTarget
    let rate: RateClass
    var phase: RequestPhase = .loggedIn
    /// The bit a member needs where the request applies (`scope`); checks
    /// that depend on the request's content (mentions, guest fields, the
    /// message asked about) are in its handler.
    var needs: Permission = []
    var scope: PermissionScope?

    init(_ target: RequestTarget, _ rate: RateClass, phase: RequestPhase = .loggedIn, needs: Permission = [], at scope: PermissionScope? = nil) {
        self.target = target
        self.rate = rate
        self.phase = phase
        self.needs = needs
        self.scope = scope
    }
}

extension GHRequest.OneOf_Body {
    var rule: RequestRule {
        switch self {
        case .login, .resume: RequestRule(.user, .session, phase: .opensSession)
        case .heartbeat, .ack, .logout: RequestRule(.gateway, .session)
        // The guild's home keeps who is interested in its channels.
        case .subscribe(let r): RequestRule(.guilds(r.targets.map(\.serverID)), .change)
        case .setSubscribeMode: RequestRule(.everyHome, .change)
        case .enterAsGuest(let r): RequestRule(.guild(r.serverID), .change)
        case .leaveAsGuest(let r): RequestRule(.guild(r.serverID), .change)
        case .listMyServers, .getServers, .getMessages, .getReceiptInfo, .getReceiptReaders: RequestRule(.everyHome, .query)
        case .listMembers(let r): RequestRule(.guild(r.serverID), .query)
        case .listChannels(let r): RequestRule(.guild(r.serverID), .query)
        case .listRoles(let r): RequestRule(.guild(r.serverID), .query)
        case .getPermissions(let r): RequestRule(.guild(r.serverID), .query)
        // A conversation's id is not a channel's: every home looks for it.
        case .getHistory(let r): RequestRule(.announcedChannel(r.channelID), .query)
        case .getThread(let r): RequestRule(.announcedChannel(r.channelID), .query)
        case .getUnread(let r): RequestRule(.channels(r.channelIds), .query)
        case .createServer: RequestRule(.here, .change)
        case .deleteServer(let r): RequestRule(.guild(r.serverID), .change)
        case .joinServer(let r): RequestRule(.guild(r.serverID), .change)
        case .acceptInvite(let r): RequestRule(.guild(r.serverID), .change)
        case .leaveServer(let r): RequestRule(.guild(r.serverID), .change)
        case .markRead(let r): RequestRule(.channel(r.channelID), .change)
        case .updateServer(let r): RequestRule(.guild(r.serverID), .change, needs: .manageServer, at: .server(r.serverID))
        case .inviteMember(let r): RequestRule(.guild(r.serverID), .change, needs: .invite, at: .server(r.serverID))
        case .kickMember(let r): RequestRule(.guild(r.serverID), .change, needs: .kick, at: .server(r.serverID))
        case .banMember(let r): RequestRule(.guild(r.serverID), .change, needs: .ban, at: .server(r.serverID))
        case .unbanMember(let r): RequestRule(.guild(r.serverID), .change, needs: .ban, at: .server(r.serverID))
        case .createChannel(let r): RequestRule(.guild(r.serverID), .change, needs: .manageChannels, at: .server(r.serverID))
        case .updateChannel(let r): RequestRule(.channel(r.channelID), .change, needs: .manageChannels, at: .channel(r.channelID))
        case .deleteChannel(let r): RequestRule(.channel(r.channelID), .change, needs: .manageChannels, at: .channel(r.channelID))
        case .setMemberRole(let r): RequestRule(.guild(r.serverID), .change, needs: .manageRoles, at: .server(r.serverID))
        case .createRole(let r): RequestRule(.guild(r.serverID), .change, needs: .manageRoles, at: .server(r.serverID))
        case .updateRole(let r): RequestRule(.guild(r.serverID), .change, needs: .manageRoles, at: .server(r.serverID))
        case .deleteRole(let r): RequestRule(.guild(r.serverID), .change, needs: .manageRoles, at: .server(r.serverID))
        case .grantRole(let r): RequestRule(.guild(r.serverID), .change, needs: .manageRoles, at: .server(r.serverID))
        case .takeBackRole(let r): RequestRule(.guild(r.serverID), .change, needs: .manageRoles, at: .server(r.serverID))
        case .setPermissionOverride(let r):
            RequestRule(.guild(r.override.serverID), .change, needs: .manageRoles, at: .server(r.override.serverID))
        case .sendMessage(let r): RequestRule(.channel(r.channelID), .message, needs: .sendMessages, at: .channel(r.channelID))
        case .requestReceipt: RequestRule(.everyHome, .message)
        case .respondReceipts(let r): RequestRule(.channel(r.channelID), .message)
        // Who may is decided per message (sender, window, RECALL_OTHERS, DELETE_OTHERS): MessageOperations.
        case .recallMessage(let r): RequestRule(.announcedChannel(r.channelID), .message)
        case .editMessage(let r): RequestRule(.announcedChannel(r.channelID), .message)
        case .deleteMessage(let r): RequestRule(.announcedChannel(r.channelID), .message)
        case .addReaction(let r): RequestRule(.announcedChannel(r.channelID), .message)
        case .removeReaction(let r): RequestRule(.announcedChannel(r.channelID), .message)
        case .sendTyping(let r): RequestRule(.channel(r.channelID), .typing, needs: .sendMessages, at: .channel(r.channelID))
        case .listConversations, .getSentStatus: RequestRule(.everyHome, .query)
        // Received status: the user's home holds what was set, the homes of the messages what reading and delivery say.
        case .getReceivedStatus: RequestRule(.everyHome, .query)
        case .openConversation(let r): RequestRule(.conversation(r.peerID), .change)
        case .setReceivedStatus: RequestRule(.user, .change)
        case .markDelivered, .sendReadReceipt, .ackMessageRead, .ackConversationRead: RequestRule(.everyHome, .change)
        case .sendDirectMessage(let r): RequestRule(.conversation(r.peerID), .message)
        }
    }
}
