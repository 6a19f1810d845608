// A gateway's way to the homes (DESIGN §9, CLUSTER §1): which home hears
// each request and each report about a session. A login goes to its user's
// home, which admits it; the other homes then hear the session opened, so
// each can deliver to it and answer it. A request goes where the request
// table says and its ids lead (`HomeMap`): a guild's to the guild's home (a
// channel's guild from the placements homes announce), a user's to the
// user's home, a direct conversation's to its lower user's home. A request
// whose home its ids do not tell (message UIDs, conversation ids, lists
// across guilds) goes to every home: each answers what it holds, and the
// parts merge into one answer (GatherMerge.swift). Reports of a session's
// life go to every home; acknowledgements to its user's home. Gateway loop only.

import GuildhallCore
import GuildhallWire

final class HomeRoutes {
    let map: HomeMap
    /// This gateway's loop.
    let index: Int
    /// Every home by loop: this loop's called directly, the others through `RemoteHome`s.
    private var homes: [any GatewayHome] = []
    /// Each channel's guild, as the homes announced them (for a channel id's home).
    private var channels: [ChannelID: ServerID]
    /// Requests every home answers, by the id the homes see, until all parts are in.
    private var gathers: [UInt64: Gather] = [:]
    private var nextGatherID: UInt64 = 0
    unowned var gateway: Gateway!

    /// In a cluster, the shards this node serves.
    let served: ServedShards

    init(map: HomeMap, index: Int, channels: [ChannelID: ServerID], served: ServedShards) {
        self.map = map
        self.index = index
        self.channels = channels
        self.served = served
    }

    func connect(_ homes: [any GatewayHome]) { self.homes = homes }

    // MARK: Sessions

    func admit(_ a: Admission) { homes[map.home(user: a.token.user)].admit(a) }

    /// Its user's home admitted `s`: the others hear of it before its next request.
    func opened(_ s: Session) {
        guard homes.count > 1 else { return }
        let userHome = map.home(user: s.user)
        let o = OpenedSession(key: s.key, user: s.user, device: s.device, sessionID: s.sessionID, autoSubscribe: s.autoSubscribeAtLogin)
        for (i, h) in homes.enumerated() where i != userHome { h.sessionOpened(o) }
    }

    func acknowledged(session key: UInt64, ackedOrd: UInt64, packageAcked: Bool) {
        guard let s = gateway.sessions[key] else { return }
        homes[map.home(user: s.user)].acknowledged(session: key, ackedOrd: ackedOrd, packageAcked: packageAcked)
    }

    /// The session's device received channels' messages up to seqs: each channel's home hears of its own.
    func received(_ upTo: [(ChannelID, UInt64)], from s: Session) {
        var byHome: [Int: [ChannelID: UInt64]] = [:]
        for (channel, seq) in upTo {
            let h = homes.count > 1 ? home(ofChannel: channel, for: s) : 0
            byHome[h, default: [:]][channel] = max(seq, byHome[h]?[channel] ?? 0)
        }
        for (h, part) in byHome { homes[h].received(session: s.key, part) }
    }

    func sessionEnded(_ key: UInt64, ackedOrd: UInt64) { for h in homes { h.sessionEnded(key, ackedOrd: ackedOrd) } }
    func sessionDetached(_ key: UInt64, since: UInt64) { for h in homes { h.sessionDetached(key, since: since) } }
    func sessionResumed(_ key: UInt64) { for h in homes { h.sessionResumed(key) } }
    func sessionBehind(_ key: UInt64, _ behind: Bool) { for h in homes { h.sessionBehind(key, behind) } }
    func turnEnding() { for h in homes { h.turnEnding() } }
    func turnEnded(_ gateway: Gateway) { for h in homes { h.turnEnded(gateway) } }

    // MARK: Requests

    func sendMessage(_ r: SendRequest, id: UInt64, from s: Session, bytes: Int) {
        guard servedHere(.channel(r.channelID), for: s) else { return refuseUnserved(id, from: s) }
        let h = homes.count > 1 ? home(ofChannel: r.channelID, for: s) : 0
        if h != index { gateway.forwarded(s, bytes: bytes) }
        homes[h].sendMessage(r, id: id, session: s.key)
    }

    /// `bytes`: the request's size, counted while a home on another loop has it.
    func route(_ body: GHRequest.OneOf_Body, id: UInt64, from s: Session, bytes: Int) {
        if case .setReceivedStatus(let r) = body, (1...Limits.maxIdsPerRequest).contains(r.messageUids.count) {
            // Flags are kept only on messages the caller may read: the homes
            // that hold them say which first, as for GetMessages.
            gateway.forwarded(s, bytes: bytes)
            var get = GHGetMessages()
            get.uids = r.messageUids
            gather(.getMessages(get), id: id, from: s, merge: .readableFirst(r))
            return
        }
        guard !served.clustered || servedHere(RequestTarget(body), for: s) else { return refuseUnserved(id, from: s) }
        guard homes.count > 1 else {
            homes[0].route(body, id: id, session: s.key, part: false)
            return
        }
        if let h = destination(body, for: s) {
            if h != index { gateway.forwarded(s, bytes: bytes) }
            homes[h].route(body, id: id, session: s.key, part: false)
        } else {
            gateway.forwarded(s, bytes: bytes)
            gather(body, id: id, from: s, merge: GatherMerge(body))
        }
    }

    private func gather(_ body: GHRequest.OneOf_Body, id: UInt64, from s: Session, merge: GatherMerge) {
        nextGatherID += 1
        let gid = nextGatherID
        gathers[gid] = Gather(session: s.key, id: id, merge: merge, expected: homes.count)
        for h in homes { h.route(body, id: gid, session: s.key, part: true) }
    }

    /// A home's part of a gathered answer; the last one completes it.
    func partArrived(_ gid: UInt64, _ result: GHResponse.OneOf_Result, for s: Session) {
        guard var g = gathers[gid] else { return }
        g.parts.append(result)
        guard g.parts.count == g.expected else { gathers[gid] = g; return }
        gathers.removeValue(forKey: gid)
        guard s.isOpen, s.key == g.session else { return }
        gateway.answered(s)
        if case .readableFirst(let r) = g.merge {
            return setReceivedStatus(r, id: g.id, from: s, readable: g.merge.merged(g.parts))
        }
        s.respond(g.id, g.merge.merged(g.parts))
    }

    /// Stores the flags at the user's home when every message is one the caller may read; otherwise answers
    /// the first other one as not found, exactly as for a UID that names nothing.
    private func setReceivedStatus(_ r: GHSetReceivedStatus, id: UInt64, from s: Session, readable: GHResponse.OneOf_Result) {
        guard case .messages(let page) = readable else { return s.respond(id, readable) }
        let found = Set(page.messages.map(\.uid))
        if let missing = r.messageUids.first(where: { !found.contains($0) }) {
            return s.respond(id, .error(GHError(Failure.notFound("message \(missing) not found"))))
        }
        let h = map.home(user: s.user)
        if h != index { gateway.forwarded(s, bytes: 0) }
        homes[h].route(.setReceivedStatus(r), id: id, session: s.key, part: false)
    }

    /// A part arrived for a session that is gone: nobody waits for the answer.
    func sessionGone(gathering gid: UInt64) { gathers.removeValue(forKey: gid) }

    /// The home of a request that one home answers, or nil when every home must answer in part.
    private func destination(_ body: GHRequest.OneOf_Body, for s: Session) -> Int? {
        switch RequestTarget(body) {
        case .user: return map.home(user: s.user)
        case .here: return index
        case .guild(let id): return map.home(guild: id)
        case .channel(let id): return home(ofChannel: id, for: s)
        case .announcedChannel(let id): return channels[id].map { map.home(guild: $0) }
        case .channels(let ids): return oneHome(ids.map { channels[$0].map { map.home(guild: $0) } })
        case .guilds(let ids): return oneHome(ids.map { map.home(guild: $0) })
        case .conversation(let peer): return map.home(conversationOf: s.user, peer)
        case .everyHome: return nil
        }
    }

    /// In a cluster, whether this node serves what `target` names now. A
    /// channel's or conversation's id hashes to its guild's or lower user's
    /// shard (they are minted so: `Home.newID`), so this holds for ids the
    /// gateway never saw. Without a cluster, everything is served here.
    func servedHere(_ target: RequestTarget, for s: Session) -> Bool {
        guard served.clustered else { return true }
        switch target {
        case .user, .here, .everyHome: return true
        case .guild(let id), .channel(let id), .announcedChannel(let id): return served.serves(id: id)
        case .channels(let ids): return ids.allSatisfy(served.serves(id:))
        case .guilds(let ids): return ids.allSatisfy(served.serves(id:))
        case .conversation(let peer): return served.serves(user: min(s.user, peer))
        }
    }

    /// Another node holds what the request names (or none does, for a moment while it moves).
    private func refuseUnserved(_ id: UInt64, from s: Session) {
        s.respond(id, .error(GHError(Failure(.unavailable, "this node does not serve that now; retry, or connect to another node"))))
    }

    /// The home of a channel's guild; a channel no home announced is answered
    /// (not found) by the caller's user home, as one that does not exist.
    private func home(ofChannel id: ChannelID, for s: Session) -> Int {
        if let server = channels[id] { return map.home(guild: server) }
        return map.home(user: s.user)
    }

    /// The one home all of `homes` name, or nil when they name several or do not know.
    private func oneHome(_ homes: [Int?]) -> Int? {
        guard let first = homes.first ?? nil else { return nil }
        return homes.allSatisfy { $0 == first } ? first : nil
    }

    // MARK: Placements

    /// A home announced a channel (or that it is gone).
    func place(_ channel: ChannelID, in server: ServerID?) { channels[channel] = server }
}

/// A request every home answers in part.
struct Gather {
    let session: UInt64
    /// The client's id for the request.
    let id: UInt64
    let merge: GatherMerge
    let expected: Int
    var parts: [GHResponse.OneOf_Result] = []
}

/// Where a request's ids lead (DESIGN §9's request table, by id): the
/// session's user, this gateway's own home (a new guild is made where it is
/// asked for), a guild, a channel's guild, a direct conversation, or every
/// home when the ids do not tell (message UIDs, lists across guilds).
enum RequestTarget: Equatable {
    case user
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
    case everyHome

    init(_ body: GHRequest.OneOf_Body) {
        switch body {
        case .login, .resume, .heartbeat, .ack, .logout: self = .user
        // A new guild is made where it is asked for, with an id placed there.
        case .createServer: self = .here
        case .updateServer(let r): self = .guild(r.serverID)
        case .deleteServer(let r): self = .guild(r.serverID)
        case .joinServer(let r): self = .guild(r.serverID)
        case .inviteMember(let r): self = .guild(r.serverID)
        case .acceptInvite(let r): self = .guild(r.serverID)
        case .leaveServer(let r): self = .guild(r.serverID)
        case .kickMember(let r): self = .guild(r.serverID)
        case .setMemberRole(let r): self = .guild(r.serverID)
        case .banMember(let r): self = .guild(r.serverID)
        case .unbanMember(let r): self = .guild(r.serverID)
        case .listMembers(let r): self = .guild(r.serverID)
        case .createChannel(let r): self = .guild(r.serverID)
        case .listChannels(let r): self = .guild(r.serverID)
        case .enterAsGuest(let r): self = .guild(r.serverID)
        case .leaveAsGuest(let r): self = .guild(r.serverID)
        case .createRole(let r): self = .guild(r.serverID)
        case .updateRole(let r): self = .guild(r.serverID)
        case .deleteRole(let r): self = .guild(r.serverID)
        case .grantRole(let r): self = .guild(r.serverID)
        case .takeBackRole(let r): self = .guild(r.serverID)
        case .setPermissionOverride(let r): self = .guild(r.override.serverID)
        case .listRoles(let r): self = .guild(r.serverID)
        case .getPermissions(let r): self = .guild(r.serverID)
        case .updateChannel(let r): self = .channel(r.channelID)
        case .deleteChannel(let r): self = .channel(r.channelID)
        case .markRead(let r): self = .channel(r.channelID)
        case .sendTyping(let r): self = .channel(r.channelID)
        case .respondReceipts(let r): self = .channel(r.channelID)
        case .sendMessage(let r): self = .channel(r.channelID)
        // A conversation's id is not a channel's: every home looks for it.
        case .getHistory(let r): self = .announcedChannel(r.channelID)
        case .recallMessage(let r): self = .announcedChannel(r.channelID)
        case .editMessage(let r): self = .announcedChannel(r.channelID)
        case .deleteMessage(let r): self = .announcedChannel(r.channelID)
        case .addReaction(let r): self = .announcedChannel(r.channelID)
        case .removeReaction(let r): self = .announcedChannel(r.channelID)
        case .getThread(let r): self = .announcedChannel(r.channelID)
        case .getUnread(let r): self = .channels(r.channelIds)
        case .subscribe(let r): self = .guilds(r.targets.map(\.serverID))
        case .openConversation(let r): self = .conversation(r.peerID)
        case .sendDirectMessage(let r): self = .conversation(r.peerID)
        case .setReceivedStatus: self = .user
        // Received status: the user's home holds what was set, the homes of the messages what reading and delivery say.
        case .getReceivedStatus: self = .everyHome
        case .listMyServers, .getServers, .getMessages, .getReceiptInfo, .getReceiptReaders, .requestReceipt, .setSubscribeMode,
             .listConversations, .getSentStatus, .markDelivered, .sendReadReceipt, .ackMessageRead, .ackConversationRead:
            self = .everyHome
        }
    }
}
