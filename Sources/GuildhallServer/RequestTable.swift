// The request table (docs/architecture.md): for every request kind, where it runs, its
// rate class, when a session may send it, and the permission bit it needs.
// One exhaustive switch, so a new request kind cannot be added without
// deciding all four. The checks the table drives run once, before any
// handler: the phase at the gateway (Connections.swift), the permission at
// the guild's home (`Home.permitted`), and the rate class with the request
// limiter. Pure.
//
// Where a request runs is the plan the loops follow (`HomeRoutes` carries it
// out): a guild's requests go to the loop (and later node) that owns the
// guild, found from the server or channel id the request names; per-user
// requests to the user's home (a direct conversation's to its lower user's);
// requests whose ids do not name a home go to every home, which answer in
// part; the rest stay on the session's gateway.

import GuildhallCore
import GuildhallWire

enum RequestPlace: Equatable {
    /// The session's own loop, which answers it: its liveness, acknowledgements, logout.
    case gateway
    /// The home of the guild the request names (by server or channel id).
    case guildHome
    /// The home of the caller's user: direct conversations, inbox, received status.
    case userHome
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
    let place: RequestPlace
    let rate: RateClass
    let phase: RequestPhase
    /// The bit a member needs where the request applies (its server or
    /// channel, `permissionScope`); checks that depend on the request's
    /// content (mentions, guest fields, the message asked about) are in its handler.
    var needs: Permission = []
}

extension GHRequest.OneOf_Body {
    var rule: RequestRule {
        switch self {
        case .login, .resume: RequestRule(place: .gateway, rate: .session, phase: .opensSession)
        case .heartbeat, .ack, .logout: RequestRule(place: .gateway, rate: .session, phase: .loggedIn)
        // The guild's home keeps who is interested in its channels.
        case .subscribe, .setSubscribeMode: RequestRule(place: .guildHome, rate: .change, phase: .loggedIn)
        case .enterAsGuest, .leaveAsGuest: RequestRule(place: .guildHome, rate: .change, phase: .loggedIn)
        case .listMyServers, .getServers, .listMembers, .listChannels, .getHistory, .getMessages, .getUnread,
             .getReceiptReaders, .getReceiptInfo:
            RequestRule(place: .guildHome, rate: .query, phase: .loggedIn)
        case .listRoles, .getPermissions: RequestRule(place: .guildHome, rate: .query, phase: .loggedIn)
        case .createServer, .deleteServer, .joinServer, .acceptInvite, .leaveServer, .markRead:
            RequestRule(place: .guildHome, rate: .change, phase: .loggedIn)
        case .updateServer: RequestRule(place: .guildHome, rate: .change, phase: .loggedIn, needs: .manageServer)
        case .inviteMember: RequestRule(place: .guildHome, rate: .change, phase: .loggedIn, needs: .invite)
        case .kickMember: RequestRule(place: .guildHome, rate: .change, phase: .loggedIn, needs: .kick)
        case .banMember, .unbanMember: RequestRule(place: .guildHome, rate: .change, phase: .loggedIn, needs: .ban)
        case .createChannel, .updateChannel, .deleteChannel:
            RequestRule(place: .guildHome, rate: .change, phase: .loggedIn, needs: .manageChannels)
        case .setMemberRole, .createRole, .updateRole, .deleteRole, .grantRole, .takeBackRole, .setPermissionOverride:
            RequestRule(place: .guildHome, rate: .change, phase: .loggedIn, needs: .manageRoles)
        case .sendMessage: RequestRule(place: .guildHome, rate: .message, phase: .loggedIn, needs: .sendMessages)
        case .requestReceipt, .respondReceipts: RequestRule(place: .guildHome, rate: .message, phase: .loggedIn)
        // Who may is decided per message (sender, window, RECALL_OTHERS, DELETE_OTHERS): MessageOperations.
        case .recallMessage, .editMessage, .deleteMessage, .addReaction, .removeReaction:
            RequestRule(place: .guildHome, rate: .message, phase: .loggedIn)
        case .getThread: RequestRule(place: .guildHome, rate: .query, phase: .loggedIn)
        case .sendTyping: RequestRule(place: .guildHome, rate: .typing, phase: .loggedIn, needs: .sendMessages)
        case .listConversations, .getSentStatus, .getReceivedStatus: RequestRule(place: .userHome, rate: .query, phase: .loggedIn)
        case .openConversation, .setReceivedStatus, .markDelivered, .sendReadReceipt, .ackMessageRead, .ackConversationRead:
            RequestRule(place: .userHome, rate: .change, phase: .loggedIn)
        case .sendDirectMessage: RequestRule(place: .userHome, rate: .message, phase: .loggedIn)
        }
    }
}

extension GHRequest.OneOf_Body {
    /// Where a request's permission bit is asked for: the server or channel
    /// it names. nil for kinds that need none (`RequestRule.needs` empty).
    var permissionScope: PermissionScope? {
        switch self {
        case .updateServer(let r): .server(r.serverID)
        case .inviteMember(let r): .server(r.serverID)
        case .kickMember(let r): .server(r.serverID)
        case .banMember(let r): .server(r.serverID)
        case .unbanMember(let r): .server(r.serverID)
        case .createChannel(let r): .server(r.serverID)
        case .setMemberRole(let r): .server(r.serverID)
        case .createRole(let r): .server(r.serverID)
        case .updateRole(let r): .server(r.serverID)
        case .deleteRole(let r): .server(r.serverID)
        case .grantRole(let r): .server(r.serverID)
        case .takeBackRole(let r): .server(r.serverID)
        case .setPermissionOverride(let r): .server(r.override.serverID)
        case .updateChannel(let r): .channel(r.channelID)
        case .deleteChannel(let r): .channel(r.channelID)
        case .sendMessage(let r): .channel(r.channelID)
        case .sendTyping(let r): .channel(r.channelID)
        default: nil
        }
    }
}
