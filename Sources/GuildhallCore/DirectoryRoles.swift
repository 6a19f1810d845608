// Roles, overrides and the permission check of the Directory (docs/features.md).
// `require` is the one check every request's permission bit goes through
// (the request table names the bit and where it applies); the operations
// below change roles and overrides under the role hierarchy: an actor
// changes only roles below its own highest role, and members it outranks.
// Pure, owned by the guild's home like the rest of the Directory.

/// Where a permission bit is asked for.
public enum PermissionScope: Sendable, Equatable {
    case server(ServerID)
    case channel(ChannelID)
}

extension Directory {
    // MARK: Checking

    /// What `user` may do on the server, or in `channel`; nil when not a member.
    public func permissions(of user: UserID, in server: ServerID, channel: ChannelID? = nil) -> Permission? {
        guard let s = servers[server], let m = s.members[user] else { return nil }
        if m.isOwner { return .all }
        return s.permissions.resolve(user, holding: m.roles, in: channel)
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
    public func everyoneViews(_ server: ServerID) -> Bool { servers[server]?.permissions.viewIsUniform ?? true }

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
            guard let c = channels[id], let p = permissions(of: user, in: c.serverID, channel: id), p.contains(.viewChannel) else {
                throw Self.channelNotFound(id)
            }
            granted = p
        }
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

    /// Where a member stands: the owner above everything, others at their highest role.
    func rank(_ m: MemberRecord) -> UInt64 {
        if m.isOwner { return .max }
        let roles = servers[m.serverID]?.permissions.roles
        return UInt64(m.roles.compactMap { roles?[$0]?.position }.max() ?? 0)
    }

    func requireOutranks(_ actor: UserID, _ target: MemberRecord, _ verb: String) throws(Failure) {
        guard let a = servers[target.serverID]?.members[actor], rank(a) > rank(target) else {
            throw Failure.forbidden("you may only \(verb) members whose highest role is below yours in server \(target.serverID)")
        }
    }

    /// The actor as a member, ranked above `position`.
    private func requireAbove(_ position: UInt32, _ actor: UserID, in server: ServerID, _ what: String) throws(Failure) -> MemberRecord {
        let a = servers[server]!.members[actor]!
        guard rank(a) > UInt64(position) else {
            throw Failure.forbidden("you may only \(what) roles below your highest role in server \(server)")
        }
        return a
    }

    /// A non-owner grants only bits it holds itself (where the grant applies).
    private func requireHeld(_ bits: PermissionOverride, by actor: MemberRecord, channel: ChannelID?) throws(Failure) {
        guard !actor.isOwner, let held = permissions(of: actor.userID, in: actor.serverID, channel: channel) else { return }
        let extra = bits.allow.subtracting(held)
        guard extra.isEmpty else { throw Failure.forbidden("you may not allow \(extra.description), which you do not hold yourself") }
    }

    // MARK: Roles

    public func roles(of server: ServerID, askedBy user: UserID) throws(Failure) -> [RoleRecord] {
        _ = try visibleServer(server, to: user)
        return servers[server]!.permissions.roles.values.sorted { ($0.position, $0.id) > ($1.position, $1.id) }
    }

    public func overrides(of server: ServerID, askedBy user: UserID) throws(Failure) -> [OverrideRecord] {
        _ = try visibleServer(server, to: user)
        return servers[server]!.permissions.overrides.filter { $0.channelID == 0 || channels[$0.channelID].map { canView(user, $0) } == true }
    }

    public func role(_ id: RoleID, in server: ServerID) throws(Failure) -> RoleRecord {
        guard let r = servers[server]?.permissions.roles[id] else { throw Failure.notFound("role \(id) not found in server \(server)") }
        return r
    }

    public func createRole(in server: ServerID, by actor: UserID, name: String, position: UInt32, permissions: PermissionOverride,
                           now: UInt64) throws(Failure) -> DirectoryDecision<RoleRecord> {
        _ = try visibleServer(server, to: actor)
        try Validation.name(name, field: "name")
        guard position >= 1 else { throw Failure.badRequest("position must be 1 or more (0 is the everyone role's)") }
        let bits = try permissions.validated(field: "permissions")
        let a = try requireAbove(position, actor, in: server, "create")
        try requireHeld(bits, by: a, channel: nil)
        let roles = servers[server]!.permissions.roles
        guard roles.count < Limits.maxRolesPerServer else {
            throw Failure(.limitReached, "a server has at most \(Limits.maxRolesPerServer) roles")
        }
        let role = RoleRecord(serverID: server, id: (roles.keys.max() ?? 0) + 1, name: name, position: position, permissions: bits,
                              createdAt: now)
        return DirectoryDecision(role, [.roleSaved(role)])
    }

    public func updateRole(_ id: RoleID, in server: ServerID, by actor: UserID, name: String?, position: UInt32?,
                           permissions: PermissionOverride?) throws(Failure) -> DirectoryDecision<RoleRecord> {
        _ = try visibleServer(server, to: actor)
        var r = try role(id, in: server)
        let a = try requireAbove(r.position, actor, in: server, "change")
        if id == .everyone, name != nil || position != nil {
            throw Failure.badRequest("the everyone role's name and position cannot change; only its permissions")
        }
        if let name {
            try Validation.name(name, field: "name")
            r.name = name
        }
        if let position {
            guard position >= 1 else { throw Failure.badRequest("position must be 1 or more (0 is the everyone role's)") }
            _ = try requireAbove(position, actor, in: server, "move")
            r.position = position
        }
        if let permissions {
            let bits = try permissions.validated(field: "permissions")
            try requireHeld(bits, by: a, channel: nil)
            r.permissions = bits
        }
        return DirectoryDecision(r, [.roleSaved(r)])
    }

    /// Deletes a role; returns it, and the members who held it are saved without it.
    public func deleteRole(_ id: RoleID, in server: ServerID, by actor: UserID) throws(Failure) -> DirectoryDecision<RoleRecord> {
        _ = try visibleServer(server, to: actor)
        guard id != .everyone else { throw Failure.badRequest("the everyone role cannot be deleted") }
        let r = try role(id, in: server)
        _ = try requireAbove(r.position, actor, in: server, "delete")
        var holders: [MemberRecord] = []
        for var m in servers[server]!.members.values where m.roles.contains(id) {
            m.roles.removeAll { $0 == id }
            holders.append(m)
        }
        return DirectoryDecision(r, [.roleDeleted(server, id)] + holders.sorted { $0.userID < $1.userID }.map(DirectoryChange.memberSaved))
    }

    /// Grants a role; no change when the member held it already.
    public func grant(_ id: RoleID, to user: UserID, in server: ServerID, by actor: UserID) throws(Failure) -> DirectoryDecision<MemberRecord> {
        try changeRoles(id, of: user, in: server, by: actor, grant: true)
    }

    public func takeBack(_ id: RoleID, from user: UserID, in server: ServerID, by actor: UserID) throws(Failure) -> DirectoryDecision<MemberRecord> {
        try changeRoles(id, of: user, in: server, by: actor, grant: false)
    }

    private func changeRoles(_ id: RoleID, of user: UserID, in server: ServerID, by actor: UserID,
                             grant: Bool) throws(Failure) -> DirectoryDecision<MemberRecord> {
        _ = try visibleServer(server, to: actor)
        guard id != .everyone else { throw Failure.badRequest("every member holds the everyone role; it is not granted") }
        let r = try role(id, in: server)
        guard var m = servers[server]!.members[user] else { throw Failure.notFound("\(user) is not a member of server \(server)") }
        _ = try requireAbove(r.position, actor, in: server, grant ? "grant" : "take back")
        guard m.roles.contains(id) != grant else { return DirectoryDecision(m, []) }
        if grant { m.roles = (m.roles + [id]).sorted() } else { m.roles.removeAll { $0 == id } }
        return DirectoryDecision(m, [.memberSaved(m)])
    }

    // MARK: Overrides

    /// Sets an override on a channel (for a role or a member) or on the
    /// server (for a member); Inherit on every bit removes it.
    public func setOverride(_ o: OverrideRecord, by actor: UserID) throws(Failure) -> DirectoryDecision<OverrideRecord> {
        _ = try visibleServer(o.serverID, to: actor)
        if o.channelID != 0 {
            guard let c = channels[o.channelID], c.serverID == o.serverID, canView(actor, c) else { throw Self.channelNotFound(o.channelID) }
        }
        let bits = try o.permissions.validated(field: "permissions", within: o.channelID == 0 ? .all : .perChannel)
        let a = servers[o.serverID]!.members[actor]!
        switch o.target {
        case .role(let id):
            guard o.channelID != 0 else { throw Failure.badRequest("a role's bits on the server are set with UpdateRole") }
            _ = try requireAbove(try role(id, in: o.serverID).position, actor, in: o.serverID, "override")
        case .member(let user):
            guard let target = servers[o.serverID]!.members[user] else {
                throw Failure.notFound("\(user) is not a member of server \(o.serverID)")
            }
            try requireOutranks(actor, target, "override")
        }
        try requireHeld(bits, by: a, channel: o.channelID == 0 ? nil : o.channelID)
        var saved = o
        saved.permissions = bits
        return DirectoryDecision(saved, [.overrideSaved(saved)])
    }
}
