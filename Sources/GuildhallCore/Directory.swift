// The live state of servers, channels, members and invitations, and the
// queries on it (roles, overrides and the permission check in
// DirectoryRoles.swift, their resolution in Permissions.swift; the decisions
// on requests that would change it in DirectoryDecisions.swift).
//
// Owned by the loop thread. A decision only decides: it checks the rules
// against the committed state and returns a `DirectoryDecision`, the
// `DirectoryChange`s the store must write. Nothing changes in memory until
// the caller has committed them and hands them to `apply`
// (DirectoryChanges.swift), so a change that could not be stored is never
// seen (docs/architecture.md). A non-member asking
// about a server gets 404, exactly as for a server that does not exist, so
// existence does not leak; so does a member asking about a channel they may
// not view. Whether the caller holds the permission bit a request needs is
// checked once before the decision (`require`, driven by the request
// table); the decisions check what depends on their content: the role
// hierarchy, the owner's rules.

public final class Directory {
    /// A class: a read of one entry (a permission check, a member count) is a
    /// pointer, where a struct was copied whole, a retain of each of its tables.
    final class ServerState {
        var record: ServerRecord
        var members: [UserID: MemberRecord] = [:]
        var invites: [UserID: InviteRecord] = [:]
        /// Invite codes (InviteCodes.swift), by code.
        var codes: [String: InviteCode] = [:]
        var bans: [UserID: BanRecord] = [:]
        var channels: Set<ChannelID> = []
        var permissions = ServerPermissions()
        /// Past the small-server threshold (ServerSize.swift).
        var large = false

        init(record: ServerRecord) { self.record = record }
    }

    var servers: [ServerID: ServerState] = [:]
    var channels: [ChannelID: ChannelRecord] = [:]
    var memberships: [UserID: Set<ServerID>] = [:]
    /// Each invite code's server: a request naming only a code finds it here.
    var codeServers: [String: ServerID] = [:]
    /// Timeouts (Moderation.swift): per server, until when, by member. Kept beside the
    /// servers, so a send checks one dictionary that is nearly always empty.
    var timeouts: [ServerID: [UserID: UInt64]] = [:]
    /// The seq the next message of a channel takes. A channel's record shows
    /// only committed messages (`lastSeq`), so nothing uncommitted is visible.
    var nextSeq: [ChannelID: UInt64] = [:]
    /// Where servers turn large and small again (a live setting): every server is rechecked when it changes.
    public var sizeMarks = ServerSizeMarks(threshold: 2_000) {
        didSet { if sizeMarks != oldValue { for id in servers.keys { resize(id) } } }
    }

    public init() {}

    // MARK: Loading

    /// Rebuilds state from stored rows at startup.
    public func load(servers: [ServerRecord], members: [MemberRecord], invites: [InviteRecord], channels: [ChannelRecord],
                              bans: [BanRecord] = [], roles: [RoleRecord] = [], overrides: [OverrideRecord] = [], codes: [InviteCode] = [],
                              timeouts: [TimeoutRecord] = []) {
        defer {
            for t in timeouts where self.servers[t.serverID] != nil { self.timeouts[t.serverID, default: [:]][t.userID] = t.until }
            for c in codes where self.servers[c.serverID] != nil {
                self.servers[c.serverID]!.codes[c.code] = c
                codeServers[c.code] = c.serverID
            }
            for b in bans where self.servers[b.serverID] != nil { self.servers[b.serverID]!.bans[b.userID] = b }
            for r in roles where self.servers[r.serverID] != nil { self.servers[r.serverID]!.permissions.save(r) }
            for o in overrides where self.servers[o.serverID] != nil { self.servers[o.serverID]!.permissions.save(o) }
        }
        for s in servers { self.servers[s.id] = ServerState(record: s) }
        for m in members where self.servers[m.serverID] != nil {
            self.servers[m.serverID]!.members[m.userID] = m
            memberships[m.userID, default: []].insert(m.serverID)
        }
        for s in servers { resize(s.id) }
        for i in invites where self.servers[i.serverID] != nil { self.servers[i.serverID]!.invites[i.userID] = i }
        for c in channels where self.servers[c.serverID] != nil {
            self.channels[c.id] = c
            self.servers[c.serverID]!.channels.insert(c.id)
        }
    }

    /// Forgets a server and everything in it (its shard moved to another
    /// node, which now holds it); returns its channels.
    public func forget(_ id: ServerID) -> Set<ChannelID> {
        guard let state = servers.removeValue(forKey: id) else { return [] }
        for user in state.members.keys { memberships[user]?.remove(id) }
        for code in state.codes.keys { codeServers.removeValue(forKey: code) }
        timeouts.removeValue(forKey: id)
        for c in state.channels {
            channels.removeValue(forKey: c)
            nextSeq.removeValue(forKey: c)
        }
        return state.channels
    }

    /// Every server held.
    public var allServerIDs: [ServerID] { Array(servers.keys) }

    // MARK: Queries

    // Reads of one field go through `map`: `servers[id]?.field` copies the
    // whole entry first (a retain and release of each of its strings and
    // tables), `servers[id].map { $0.field }` borrows it.
    public func server(_ id: ServerID) -> ServerRecord? { servers[id].map { $0.record } }
    public func channel(_ id: ChannelID) -> ChannelRecord? { channels[id] }
    /// The channel's server, without copying its record (names, removed seqs).
    public func serverID(ofChannel id: ChannelID) -> ServerID? { channels[id].map { $0.serverID } }
    public func memberCount(_ id: ServerID) -> Int { servers[id].map { $0.members.count } ?? 0 }
    public func member(_ user: UserID, of server: ServerID) -> MemberRecord? { servers[server].flatMap { $0.members[user] } }
    public func serverIDs(of user: UserID) -> Set<ServerID> { memberships[user] ?? [] }
    public func memberIDs(of server: ServerID) -> Dictionary<UserID, MemberRecord>.Keys? { servers[server].map { $0.members.keys } }
    public var serverCount: Int { servers.count }
    /// The servers listed in the directory (ServerDirectory.swift).
    public func discoverableServers() -> [ServerRecord] { servers.values.lazy.map(\.record).filter(\.discoverable) }

    /// Whether guests see a channel: the server allows guests and the channel is not hidden from them.
    public func guestVisible(_ channel: ChannelRecord) -> Bool {
        guard servers[channel.serverID].map({ $0.record.allowGuests }) == true else { return false }
        return channel.guestVisibility != .invisible
    }

    /// Channels of a server, unsorted, for internal walks.
    public func channelIDs(of server: ServerID) -> Set<ChannelID> { servers[server].map { $0.channels } ?? [] }
    public var channelCount: Int { channels.count }

    /// What `user` may see of it, each read answering a request (DirectorySeenBy.swift).
    public func seen(by user: UserID) -> DirectorySeenBy { DirectorySeenBy(directory: self, user: user) }

    // MARK: Guests

    /// The channel, if guests see it; 404 otherwise.
    public func guestChannel(_ id: ChannelID) throws(Failure) -> ChannelRecord {
        guard let c = channels[id], guestVisible(c) else { throw Failure.notFound("channel \(id) not found") }
        return c
    }

    // MARK: Messages

    /// Takes the next seq of channel `c` (as read just now) for a message
    /// sent at `now`; sent times never go backwards within a channel. Whether
    /// the sender may send there is the permission check's (`require`), before.
    public func sequence(_ c: ChannelRecord, now: UInt64) -> (seq: UInt64, time: UInt64) {
        let seq = max(nextSeq[c.id] ?? 0, c.lastSeq) + 1
        nextSeq[c.id] = seq
        return (seq, max(now, c.lastMessageTime))
    }

    /// A recalled or deleted message stops counting as unread and as a mention.
    public func messageRemoved(_ id: ChannelID, seq: UInt64) { channels.change(id) { $0.removed.insert(seq) } }

    /// Makes a committed message visible in its channel's tail.
    public func messageCommitted(_ id: ChannelID, seq: UInt64, time: UInt64) {
        // Changed where it lies (DictionaryChange.swift): binding the record copied it, `?.` ran the modify coroutine.
        channels.change(id) { $0.advance(to: seq, at: time) }
    }

    // MARK: Helpers

    static func serverNotFound(_ id: ServerID) -> Failure { .notFound("server \(id) not found") }
    public static func channelNotFound(_ id: ChannelID) -> Failure { .notFound("channel \(id) not found") }


}

extension ChannelRecord {
    /// A committed message's seq and time: the channel's tail moves forward only.
    mutating func advance(to seq: UInt64, at time: UInt64) {
        lastSeq = max(lastSeq, seq)
        lastMessageTime = max(lastMessageTime, time)
    }
}
