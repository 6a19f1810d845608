// The live state of servers, channels, members and invitations, and the
// rules of docs/features.md as pure functions (roles and overrides in
// DirectoryRoles.swift, their resolution in Permissions.swift).
//
// Owned by the loop thread. Each operation only decides: it checks the
// rules against the committed state and returns a `DirectoryDecision`, the
// `DirectoryChange`s the store must write. Nothing changes in memory until
// the caller has committed them and hands them to `apply`
// (DirectoryChanges.swift), so a change that could not be stored is never
// seen (docs/architecture.md). A non-member asking
// about a server gets 404, exactly as for a server that does not exist, so
// existence does not leak; so does a member asking about a channel they may
// not view. Whether the caller holds the permission bit a request needs is
// checked once before the operation runs (`require`, driven by the request
// table); the operations here check what depends on their content: the
// role hierarchy, the owner's rules.

public struct Directory: Sendable {
    struct ServerState: Sendable {
        var record: ServerRecord
        var members: [UserID: MemberRecord] = [:]
        var invites: [UserID: InviteRecord] = [:]
        var bans: [UserID: BanRecord] = [:]
        var channels: Set<ChannelID> = []
        var permissions = ServerPermissions()
        /// Past the small-server threshold (ServerSize.swift).
        var large = false
    }

    var servers: [ServerID: ServerState] = [:]
    var channels: [ChannelID: ChannelRecord] = [:]
    var memberships: [UserID: Set<ServerID>] = [:]
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
    public mutating func load(servers: [ServerRecord], members: [MemberRecord], invites: [InviteRecord], channels: [ChannelRecord],
                              bans: [BanRecord] = [], roles: [RoleRecord] = [], overrides: [OverrideRecord] = []) {
        defer {
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
    public mutating func forget(_ id: ServerID) -> Set<ChannelID> {
        guard let state = servers.removeValue(forKey: id) else { return [] }
        for user in state.members.keys { memberships[user]?.remove(id) }
        for c in state.channels {
            channels.removeValue(forKey: c)
            nextSeq.removeValue(forKey: c)
        }
        return state.channels
    }

    /// Every server held.
    public var allServerIDs: [ServerID] { Array(servers.keys) }

    // MARK: Queries

    public func server(_ id: ServerID) -> ServerRecord? { servers[id]?.record }
    public func channel(_ id: ChannelID) -> ChannelRecord? { channels[id] }
    public func memberCount(_ id: ServerID) -> Int { servers[id]?.members.count ?? 0 }
    public func role(of user: UserID, in server: ServerID) -> Role? { servers[server]?.members[user]?.role }
    public func member(_ user: UserID, of server: ServerID) -> MemberRecord? { servers[server]?.members[user] }
    public func serverIDs(of user: UserID) -> Set<ServerID> { memberships[user] ?? [] }
    public func memberIDs(of server: ServerID) -> Dictionary<UserID, MemberRecord>.Keys? { servers[server]?.members.keys }
    public var serverCount: Int { servers.count }
    public func isBanned(_ user: UserID, from server: ServerID) -> Bool { servers[server]?.bans[user] != nil }
    public func joinedAt(_ user: UserID, in server: ServerID) -> UInt64? { servers[server]?.members[user]?.joinedAt }

    /// Whether guests see a channel: the server allows guests and the channel is not hidden from them.
    public func guestVisible(_ channel: ChannelRecord) -> Bool {
        guard servers[channel.serverID]?.record.allowGuests == true else { return false }
        return channel.guestVisibility != .invisible
    }

    /// Channels of a server, unsorted, for internal walks.
    public func channelIDs(of server: ServerID) -> Set<ChannelID> { servers[server]?.channels ?? [] }
    public var channelCount: Int { channels.count }

    /// The server, if `user` is a member; 404 otherwise.
    public func visibleServer(_ id: ServerID, to user: UserID) throws(Failure) -> ServerRecord {
        guard let s = servers[id], s.members[user] != nil else { throw Self.serverNotFound(id) }
        return s.record
    }

    public func members(of server: ServerID, askedBy user: UserID) throws(Failure) -> [MemberRecord] {
        _ = try visibleServer(server, to: user)
        return servers[server]!.members.values.sorted { $0.userID < $1.userID }
    }

    /// The channels of a server `user` may view.
    public func channels(of server: ServerID, askedBy user: UserID) throws(Failure) -> [ChannelRecord] {
        _ = try visibleServer(server, to: user)
        return servers[server]!.channels.compactMap { channels[$0] }.filter { canView(user, $0) }.sorted { $0.id < $1.id }
    }

    /// The channel, if `user` is a member of its server who may view it; 404 otherwise.
    public func readableChannel(_ id: ChannelID, by user: UserID) throws(Failure) -> ChannelRecord {
        guard let c = channels[id], canView(user, c) else { throw Self.channelNotFound(id) }
        return c
    }

    // MARK: Servers

    public func createServer(_ record: ServerRecord) throws(Failure) -> DirectoryDecision<ServerRecord> {
        try Self.validate(name: record.name, icon: record.icon, custom: record.custom, iconField: "icon")
        let owner = MemberRecord(serverID: record.id, userID: record.owner, role: .owner, joinedAt: record.createdAt)
        let roles = RoleRecord.starting(server: record.id, at: record.createdAt)
        return DirectoryDecision(record, [.serverSaved(record), .memberSaved(owner)] + roles.map(DirectoryChange.roleSaved))
    }

    public func updateServer(_ id: ServerID, by actor: UserID, name: String?, icon: String?, custom: String?, openJoin: Bool?,
                             allowGuests: Bool? = nil) throws(Failure) -> DirectoryDecision<ServerRecord>
    {
        var r = try visibleServer(id, to: actor)
        if let name { r.name = name }
        if let icon { r.icon = icon }
        if let custom { r.custom = custom }
        if let openJoin { r.openJoin = openJoin }
        if let allowGuests { r.allowGuests = allowGuests }
        try Self.validate(name: r.name, icon: r.icon, custom: r.custom, iconField: "icon")
        return DirectoryDecision(r, [.serverSaved(r)])
    }

    /// Deletes the server; returns the members it had, who are told.
    public func deleteServer(_ id: ServerID, by actor: UserID) throws(Failure) -> DirectoryDecision<(ServerRecord, [UserID])> {
        let s = try visibleServer(id, to: actor)
        guard s.owner == actor else { throw Failure.forbidden("only the owner may delete server \(id)") }
        return DirectoryDecision((s, Array(servers[id]!.members.keys)), [.serverDeleted(id)])
    }

    // MARK: Members

    public func join(_ id: ServerID, user: UserID, now: UInt64) throws(Failure) -> DirectoryDecision<MemberRecord> {
        guard let s = servers[id] else { throw Self.serverNotFound(id) }
        if s.members[user] != nil { throw Failure.conflict("already a member of server \(id)") }
        if s.bans[user] != nil { throw Failure.forbidden("you are banned from server \(id)") }
        let invited = s.invites[user] != nil
        guard s.record.openJoin || invited else {
            // Only a server that lets guests in shows itself to non-members.
            guard s.record.allowGuests else { throw Self.serverNotFound(id) }
            throw Failure.forbidden("server \(id) is invite-only; ask an owner or admin for an invitation")
        }
        return admit(user, to: id, now: now, consumedInvite: invited)
    }

    public func invite(_ user: UserID, to id: ServerID, by actor: UserID, now: UInt64) throws(Failure) -> DirectoryDecision<InviteRecord> {
        _ = try visibleServer(id, to: actor)
        if let problem = Validation.userIDProblem(user) { throw Failure.badRequest("invitee: \(problem)") }
        if servers[id]!.members[user] != nil { throw Failure.conflict("\(user) is already a member of server \(id)") }
        if servers[id]!.invites[user] != nil { throw Failure.conflict("\(user) is already invited to server \(id)") }
        if servers[id]!.bans[user] != nil { throw Failure.forbidden("\(user) is banned from server \(id); unban first") }
        let invite = InviteRecord(serverID: id, userID: user, inviter: actor, createdAt: now)
        return DirectoryDecision(invite, [.inviteSaved(invite)])
    }

    public func acceptInvite(_ id: ServerID, user: UserID, now: UInt64) throws(Failure) -> DirectoryDecision<MemberRecord> {
        guard let s = servers[id], s.invites[user] != nil else {
            throw Failure.notFound("no invitation to server \(id) for \(user)")
        }
        if s.members[user] != nil { throw Failure.conflict("already a member of server \(id)") }
        if s.bans[user] != nil { throw Failure.forbidden("you are banned from server \(id)") }
        return admit(user, to: id, now: now, consumedInvite: true)
    }

    public func leave(_ id: ServerID, user: UserID) throws(Failure) -> DirectoryDecision<MemberRecord> {
        let s = try visibleServer(id, to: user)
        if s.owner == user { throw Failure.forbidden("the owner cannot leave server \(id); delete it instead") }
        return DirectoryDecision(servers[id]!.members[user]!, [.memberRemoved(id, user)])
    }

    public func kick(_ user: UserID, from id: ServerID, by actor: UserID) throws(Failure) -> DirectoryDecision<MemberRecord> {
        _ = try visibleServer(id, to: actor)
        guard let target = servers[id]!.members[user] else { throw Failure.notFound("\(user) is not a member of server \(id)") }
        try requireOutranks(actor, target, "remove")
        return DirectoryDecision(target, [.memberRemoved(id, user)])
    }

    /// ADMIN or MEMBER: grants or takes back the `admin` role (SetMemberRole, from before roles had bits).
    public func setRole(_ role: Role, of user: UserID, in id: ServerID, by actor: UserID) throws(Failure) -> DirectoryDecision<MemberRecord> {
        guard role != .owner else { throw Failure.badRequest("the owner role cannot be assigned; choose admin or member") }
        _ = try visibleServer(id, to: actor)
        guard let m = servers[id]!.members[user] else { throw Failure.notFound("\(user) is not a member of server \(id)") }
        guard !m.isOwner else { throw Failure.forbidden("the owner's role cannot change") }
        return role == .admin ? try grant(.admin, to: user, in: id, by: actor) : try takeBack(.admin, from: user, in: id, by: actor)
    }

    // MARK: Channels

    public func createChannel(_ record: ChannelRecord, by actor: UserID) throws(Failure) -> DirectoryDecision<ChannelRecord> {
        _ = try visibleServer(record.serverID, to: actor)
        try Self.validate(name: record.name, icon: record.topic, custom: record.custom, iconField: "topic")
        return DirectoryDecision(record, [.channelSaved(record)])
    }

    public func updateChannel(_ id: ChannelID, by actor: UserID, name: String?, topic: String?, custom: String?,
                                       guestVisibility: GuestVisibility? = nil) throws(Failure) -> DirectoryDecision<ChannelRecord>
    {
        var c = try readableChannel(id, by: actor)
        if let name { c.name = name }
        if let topic { c.topic = topic }
        if let custom { c.custom = custom }
        if let guestVisibility { c.guestVisibility = guestVisibility }
        try Self.validate(name: c.name, icon: c.topic, custom: c.custom, iconField: "topic")
        return DirectoryDecision(c, [.channelSaved(c)])
    }

    public func deleteChannel(_ id: ChannelID, by actor: UserID) throws(Failure) -> DirectoryDecision<ChannelRecord> {
        let c = try readableChannel(id, by: actor)
        return DirectoryDecision(c, [.channelDeleted(id)])
    }

    // MARK: Guests and bans

    /// Checks that `user` may enter `id` as a guest.
    public func guestEntry(_ id: ServerID, user: UserID) throws(Failure) -> ServerRecord {
        guard let s = servers[id] else { throw Self.serverNotFound(id) }
        if s.members[user] != nil { throw Failure.conflict("members do not enter server \(id) as guests") }
        if s.bans[user] != nil { throw Failure.forbidden("you are banned from server \(id)") }
        guard s.record.allowGuests else {
            // Only a server anyone may join shows itself to non-members.
            guard s.record.openJoin || s.invites[user] != nil else { throw Self.serverNotFound(id) }
            throw Failure.forbidden("server \(id) does not allow guests")
        }
        return s.record
    }

    /// The channel, if guests see it; 404 otherwise.
    public func guestChannel(_ id: ChannelID) throws(Failure) -> ChannelRecord {
        guard let c = channels[id], guestVisible(c) else { throw Failure.notFound("channel \(id) not found") }
        return c
    }

    /// Bans `user`; a member is removed first. Returns the removed membership, if any.
    public func ban(_ user: UserID, from id: ServerID, by actor: UserID, now: UInt64) throws(Failure) -> DirectoryDecision<MemberRecord?> {
        _ = try visibleServer(id, to: actor)
        if let problem = Validation.userIDProblem(user) { throw Failure.badRequest("user: \(problem)") }
        if servers[id]!.bans[user] != nil { throw Failure.conflict("\(user) is already banned from server \(id)") }
        var changes: [DirectoryChange] = []
        let target = servers[id]!.members[user]
        if let target {
            try requireOutranks(actor, target, "ban")
            changes.append(.memberRemoved(id, user))
        }
        changes += [.banSaved(BanRecord(serverID: id, userID: user, actor: actor, createdAt: now)), .inviteRemoved(id, user)]
        return DirectoryDecision(target, changes)
    }

    public func unban(_ user: UserID, from id: ServerID, by actor: UserID) throws(Failure) -> DirectoryDecision<Void> {
        _ = try visibleServer(id, to: actor)
        guard servers[id]!.bans[user] != nil else { throw Failure.notFound("\(user) is not banned from server \(id)") }
        return DirectoryDecision((), [.banRemoved(id, user)])
    }

    /// Takes the next seq of a channel for a message sent by `user` at `now`;
    /// sent times never go backwards within a channel.
    public mutating func appendMessage(to id: ChannelID, by user: UserID, now: UInt64) throws(Failure) -> (ChannelRecord, seq: UInt64, time: UInt64) {
        let c = try readableChannel(id, by: user)
        let seq = max(nextSeq[id] ?? 0, c.lastSeq) + 1
        nextSeq[id] = seq
        return (c, seq, max(now, c.lastMessageTime))
    }

    /// A recalled or deleted message stops counting as unread and as a mention.
    public mutating func messageRemoved(_ id: ChannelID, seq: UInt64) { channels[id]?.removed.insert(seq) }

    /// Makes a committed message visible in its channel's tail.
    public mutating func messageCommitted(_ id: ChannelID, seq: UInt64, time: UInt64) {
        guard let c = channels[id] else { return }
        if seq > c.lastSeq { channels[id]!.lastSeq = seq }
        if time > c.lastMessageTime { channels[id]!.lastMessageTime = time }
    }

    // MARK: Helpers

    private func admit(_ user: UserID, to id: ServerID, now: UInt64, consumedInvite: Bool) -> DirectoryDecision<MemberRecord> {
        let m = MemberRecord(serverID: id, userID: user, role: .member, joinedAt: now)
        return DirectoryDecision(m, consumedInvite ? [.memberSaved(m), .inviteRemoved(id, user)] : [.memberSaved(m)])
    }

    static func serverNotFound(_ id: ServerID) -> Failure { .notFound("server \(id) not found") }
    static func channelNotFound(_ id: ChannelID) -> Failure { .notFound("channel \(id) not found") }

    private static func validate(name: String, icon: String, custom: String, iconField: String) throws(Failure) {
        try Validation.name(name, field: "name")
        try Validation.text(icon, field: iconField, maxCharacters: Limits.maxIconLength)
        try Validation.custom(custom, field: "custom")
    }
}
