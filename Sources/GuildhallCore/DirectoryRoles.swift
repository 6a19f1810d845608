// Roles, overrides and the permission check of the Directory (docs/features.md).
// `require` is the one check every request's permission bit goes through
// (the request table names the bit and where it applies); how roles and
// overrides change is decided in DirectoryDecisions.swift. Pure, owned by
// the guild's home like the rest of the Directory.

/// Where a permission bit is asked for.
public enum PermissionScope: Sendable, Equatable {
    case server(ServerID)
    case channel(ChannelID)
}

extension Directory {
    // MARK: Checking

    /// What `user` may do on the server, or in `channel`; nil when not a member.
    public func permissions(of user: UserID, in server: ServerID, channel: ChannelID? = nil) -> Permission? {
        // Borrowed (see Directory's queries): binding the entry with `guard let`, or a
        // closure capturing it, copied it whole (a memcpy and a retain of each of its tables).
        servers[server].flatMap { Self.permissions(of: user, in: $0, channel: channel) }
    }

    private static func permissions(of user: UserID, in s: ServerState, channel: ChannelID?) -> Permission? {
        // The member's roles, or nil for the owner; nil outside (each read field by field).
        guard let roles = s.members[user].map({ $0.isOwner ? nil : $0.roles }) else { return nil }
        guard let roles else { return .all }
        return s.permissions.resolve(user, holding: roles, in: channel)
    }

    /// Whether `user` is a member of `channel`'s server who may view it.
    public func canView(_ user: UserID, _ channel: ChannelRecord) -> Bool {
        permissions(of: user, in: channel.serverID, channel: channel.id)?.contains(.viewChannel) ?? false
    }

    /// The members who may view `channel`: who a receipt request goes to, and its "of N".
    public func readers(of channel: ChannelRecord) -> [UserID] {
        guard let s = servers[channel.serverID] else { return [] }
        if s.permissions.viewIsUniform { return Array(s.members.keys) }
        return s.members.keys.filter { canView($0, channel) }
    }

    /// How many members may view `channel`.
    public func readerCount(of channel: ChannelRecord) -> Int {
        guard let s = servers[channel.serverID] else { return 0 }
        return s.permissions.viewIsUniform ? s.members.count : s.members.keys.count { canView($0, channel) }
    }

    /// Whether every member views every channel of `server`: then a small
    /// server's messages go to all its online members without asking each.
    public func everyoneViews(_ server: ServerID) -> Bool { servers[server].map { $0.permissions.viewIsUniform } ?? true }

    /// Throws unless `user` holds `needed` where `scope` says: 404 (as for
    /// what does not exist) when the user may not see the server or channel,
    /// 403 naming the missing bits otherwise.
    public func require(_ needed: Permission, of user: UserID, at scope: PermissionScope) throws(Failure) {
        let granted: Permission
        switch scope {
        case .server(let id):
            guard let p = permissions(of: user, in: id) else { throw Self.serverNotFound(id) }
            granted = p
        case .channel(let id):
            guard let server = serverID(ofChannel: id) else { throw Self.channelNotFound(id) }
            granted = try viewing(id, in: server, by: user)
        }
        try Self.require(needed, granted: granted, at: scope)
    }

    /// `require` at `channel`'s scope, with the record already read (a send reads it first: no second look-up of the channel).
    public func require(_ needed: Permission, of user: UserID, in channel: ChannelRecord) throws(Failure) {
        try Self.require(needed, granted: viewing(channel.id, in: channel.serverID, by: user), at: .channel(channel.id))
    }

    /// What `user` holds in a channel it may view; 404 when it may not.
    private func viewing(_ channel: ChannelID, in server: ServerID, by user: UserID) throws(Failure) -> Permission {
        guard let p = permissions(of: user, in: server, channel: channel), p.contains(.viewChannel) else { throw Self.channelNotFound(channel) }
        return p
    }

    private static func require(_ needed: Permission, granted: Permission, at scope: PermissionScope) throws(Failure) {
        let missing = needed.subtracting(granted)
        guard missing.isEmpty else {
            let place = switch scope {
            case .server(let id): "server \(id)"
            case .channel(let id): "channel \(id)"
            }
            throw Failure.forbidden("you need the \(missing.description) permission in \(place)")
        }
    }

    // MARK: Hierarchy


    // MARK: Roles

    /// What `target`'s override on `channel` (0: the server) says now; nil when the server is unknown.
    public func override(on channel: ChannelID, for target: OverrideTarget, in server: ServerID) -> PermissionOverride? {
        servers[server]?.permissions.override(on: channel, for: target)
    }

    public func role(_ id: RoleID, in server: ServerID) throws(Failure) -> RoleRecord {
        guard let r = servers[server]?.permissions.roles[id] else { throw Failure.notFound("role \(id) not found in server \(server)") }
        return r
    }

}

extension MemberRecord {
    /// Where the member stands among its server's `roles`: the owner above everything, others at their highest role.
    func rank(among roles: [RoleID: RoleRecord]?) -> UInt64 {
        isOwner ? .max : UInt64(self.roles.compactMap { roles?[$0]?.position }.max() ?? 0)
    }
}
