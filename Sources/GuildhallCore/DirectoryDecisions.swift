// The Directory's decisions (docs/features.md): each request that would
// change servers, channels, members, guests, bans, roles or overrides is
// checked against the committed Directory and answered with the changes it
// would make (`DirectoryDecision`); nothing changes until they are stored
// and applied (DirectoryChanges.swift). Roles and overrides follow the role
// hierarchy: an actor changes only roles below its own highest role, and
// members it outranks. Pure.

/// The decisions on a Directory as it stands (`directory.decide`).
public struct DirectoryDecisions {
    let d: Directory

    // MARK: Servers

    public func createServer(_ record: ServerRecord) throws(Failure) -> DirectoryDecision<ServerRecord> {
        try Self.validate(name: record.name, icon: record.icon, custom: record.custom, iconField: "icon")
        let owner = MemberRecord(serverID: record.id, userID: record.owner, role: .owner, joinedAt: record.createdAt)
        let roles = RoleRecord.starting(server: record.id, at: record.createdAt)
        return DirectoryDecision(record, [.serverSaved(record), .memberSaved(owner)] + roles.map(DirectoryChange.roleSaved))
    }

    public func updateServer(_ id: ServerID, by actor: UserID, name: String?, icon: String?, custom: String?, openJoin: Bool?,
                             allowGuests: Bool? = nil, discoverable: Bool? = nil) throws(Failure) -> DirectoryDecision<ServerRecord>
    {
        var r = try d.seen(by: actor).server(id)
        if let name { r.name = name }
        if let icon { r.icon = icon }
        if let custom { r.custom = custom }
        if let openJoin { r.openJoin = openJoin }
        if let allowGuests { r.allowGuests = allowGuests }
        if let discoverable { r.discoverable = discoverable }
        try Self.validate(name: r.name, icon: r.icon, custom: r.custom, iconField: "icon")
        return DirectoryDecision(r, [.serverSaved(r)])
    }

    /// Deletes the server; returns the members it had, who are told.
    public func deleteServer(_ id: ServerID, by actor: UserID) throws(Failure) -> DirectoryDecision<(ServerRecord, [UserID])> {
        let s = try d.seen(by: actor).server(id)
        guard s.owner == actor else { throw Failure.forbidden("only the owner may delete server \(id)") }
        return DirectoryDecision((s, Array(d.servers[id]!.members.keys)), [.serverDeleted(id)])
    }

    /// The owner hands the server to member `user`; the former owner keeps the `admin` role.
    /// Returns the server as it becomes.
    public func transferOwnership(_ id: ServerID, to user: UserID, by actor: UserID) throws(Failure) -> DirectoryDecision<ServerRecord> {
        var s = try d.seen(by: actor).server(id)
        guard s.owner == actor else { throw Failure.forbidden("only the owner may transfer server \(id)") }
        guard user != actor else { throw Failure.badRequest("you own server \(id) already") }
        guard var next = d.servers[id]!.members[user], var former = d.servers[id]!.members[actor] else {
            throw Failure.notFound("\(user) is not a member of server \(id)")
        }
        s.owner = user
        next.isOwner = true
        former.isOwner = false
        if !former.roles.contains(.admin) { former.roles = (former.roles + [.admin]).sorted() }
        return DirectoryDecision(s, [.serverSaved(s), .memberSaved(former), .memberSaved(next)])
    }

    // MARK: Members

    public func join(_ id: ServerID, user: UserID, now: UInt64) throws(Failure) -> DirectoryDecision<MemberRecord> {
        guard let s = d.servers[id] else { throw Directory.serverNotFound(id) }
        if s.members[user] != nil { throw Failure.conflict("already a member of server \(id)") }
        if s.bans[user] != nil { throw Failure.forbidden("you are banned from server \(id)") }
        let invited = s.invites[user] != nil
        guard s.record.openJoin || invited else {
            // Only a server that lets guests in shows itself to non-members.
            guard s.record.allowGuests else { throw Directory.serverNotFound(id) }
            throw Failure.forbidden("server \(id) is invite-only; ask an owner or admin for an invitation")
        }
        return admit(user, to: id, now: now, consumedInvite: invited)
    }

    public func invite(_ user: UserID, to id: ServerID, by actor: UserID, now: UInt64) throws(Failure) -> DirectoryDecision<InviteRecord> {
        _ = try d.seen(by: actor).server(id)
        if let problem = Validation.userIDProblem(user) { throw Failure.badRequest("invitee: \(problem)") }
        if d.servers[id]!.members[user] != nil { throw Failure.conflict("\(user) is already a member of server \(id)") }
        if d.servers[id]!.invites[user] != nil { throw Failure.conflict("\(user) is already invited to server \(id)") }
        if d.servers[id]!.bans[user] != nil { throw Failure.forbidden("\(user) is banned from server \(id); unban first") }
        let invite = InviteRecord(serverID: id, userID: user, inviter: actor, createdAt: now)
        return DirectoryDecision(invite, [.inviteSaved(invite)])
    }

    public func acceptInvite(_ id: ServerID, user: UserID, now: UInt64) throws(Failure) -> DirectoryDecision<MemberRecord> {
        guard let s = d.servers[id], s.invites[user] != nil else {
            throw Failure.notFound("no invitation to server \(id) for \(user)")
        }
        if s.members[user] != nil { throw Failure.conflict("already a member of server \(id)") }
        if s.bans[user] != nil { throw Failure.forbidden("you are banned from server \(id)") }
        return admit(user, to: id, now: now, consumedInvite: true)
    }

    public func leave(_ id: ServerID, user: UserID) throws(Failure) -> DirectoryDecision<MemberRecord> {
        let s = try d.seen(by: user).server(id)
        if s.owner == user { throw Failure.forbidden("the owner cannot leave server \(id); delete it instead") }
        return DirectoryDecision(d.servers[id]!.members[user]!, [.memberRemoved(id, user)])
    }

    public func kick(_ user: UserID, from id: ServerID, by actor: UserID) throws(Failure) -> DirectoryDecision<MemberRecord> {
        _ = try d.seen(by: actor).server(id)
        guard let target = d.servers[id]!.members[user] else { throw Failure.notFound("\(user) is not a member of server \(id)") }
        try requireOutranks(actor, target, "remove")
        return DirectoryDecision(target, [.memberRemoved(id, user)])
    }

    /// ADMIN or MEMBER: grants or takes back the `admin` role (SetMemberRole, from before roles had bits).
    public func setRole(_ role: Role, of user: UserID, in id: ServerID, by actor: UserID) throws(Failure) -> DirectoryDecision<MemberRecord> {
        guard role != .owner else { throw Failure.badRequest("the owner role cannot be assigned; choose admin or member") }
        _ = try d.seen(by: actor).server(id)
        guard let m = d.servers[id]!.members[user] else { throw Failure.notFound("\(user) is not a member of server \(id)") }
        guard !m.isOwner else { throw Failure.forbidden("the owner's role cannot change") }
        return role == .admin ? try grant(.admin, to: user, in: id, by: actor) : try takeBack(.admin, from: user, in: id, by: actor)
    }

    // MARK: Channels

    public func createChannel(_ record: ChannelRecord, by actor: UserID) throws(Failure) -> DirectoryDecision<ChannelRecord> {
        _ = try d.seen(by: actor).server(record.serverID)
        try Self.validate(name: record.name, icon: record.topic, custom: record.custom, iconField: "topic")
        return DirectoryDecision(record, [.channelSaved(record)])
    }

    public func updateChannel(_ id: ChannelID, by actor: UserID, name: String?, topic: String?, custom: String?,
                                       guestVisibility: GuestVisibility? = nil, slowModeSeconds: UInt32? = nil) throws(Failure) -> DirectoryDecision<ChannelRecord>
    {
        var c = try d.seen(by: actor).channel(id)
        if let name { c.name = name }
        if let topic { c.topic = topic }
        if let custom { c.custom = custom }
        if let guestVisibility { c.guestVisibility = guestVisibility }
        if let slowModeSeconds {
            guard slowModeSeconds <= ModerationRules.maxSlowModeSeconds else {
                throw Failure.badRequest("slow_mode_seconds is at most \(ModerationRules.maxSlowModeSeconds) (six hours)")
            }
            c.slowModeSeconds = slowModeSeconds
        }
        try Self.validate(name: c.name, icon: c.topic, custom: c.custom, iconField: "topic")
        return DirectoryDecision(c, [.channelSaved(c)])
    }

    public func deleteChannel(_ id: ChannelID, by actor: UserID) throws(Failure) -> DirectoryDecision<ChannelRecord> {
        let c = try d.seen(by: actor).channel(id)
        return DirectoryDecision(c, [.channelDeleted(id)])
    }

    // MARK: Guests and bans

    /// Checks that `user` may enter `id` as a guest.
    public func guestEntry(_ id: ServerID, user: UserID) throws(Failure) -> ServerRecord {
        guard let s = d.servers[id] else { throw Directory.serverNotFound(id) }
        if s.members[user] != nil { throw Failure.conflict("members do not enter server \(id) as guests") }
        if s.bans[user] != nil { throw Failure.forbidden("you are banned from server \(id)") }
        guard s.record.allowGuests else {
            // Only a server anyone may join shows itself to non-members.
            guard s.record.openJoin || s.invites[user] != nil else { throw Directory.serverNotFound(id) }
            throw Failure.forbidden("server \(id) does not allow guests")
        }
        return s.record
    }

    /// Bans `user`; a member is removed first. Returns the removed membership, if any.
    /// `until`: when the ban ends by itself (0: until lifted).
    public func ban(_ user: UserID, from id: ServerID, by actor: UserID, now: UInt64, until: UInt64 = 0) throws(Failure) -> DirectoryDecision<MemberRecord?> {
        _ = try d.seen(by: actor).server(id)
        if let problem = Validation.userIDProblem(user) { throw Failure.badRequest("user: \(problem)") }
        if until != 0 && until <= now { throw Failure.badRequest("until is in the past; 0 bans until lifted") }
        if d.servers[id]!.bans[user] != nil { throw Failure.conflict("\(user) is already banned from server \(id)") }
        var changes: [DirectoryChange] = []
        let target = d.servers[id]!.members[user]
        if let target {
            try requireOutranks(actor, target, "ban")
            changes.append(.memberRemoved(id, user))
        }
        changes += [.banSaved(BanRecord(serverID: id, userID: user, actor: actor, createdAt: now, expiresAt: until)), .inviteRemoved(id, user)]
        return DirectoryDecision(target, changes)
    }

    public func unban(_ user: UserID, from id: ServerID, by actor: UserID) throws(Failure) -> DirectoryDecision<Void> {
        _ = try d.seen(by: actor).server(id)
        guard d.servers[id]!.bans[user] != nil else { throw Failure.notFound("\(user) is not banned from server \(id)") }
        return DirectoryDecision((), [.banRemoved(id, user)])
    }

    // MARK: Roles

    public func createRole(in server: ServerID, by actor: UserID, name: String, position: UInt32, permissions: PermissionOverride,
                           now: UInt64) throws(Failure) -> DirectoryDecision<RoleRecord> {
        _ = try d.seen(by: actor).server(server)
        try Validation.name(name, field: "name")
        guard position >= 1 else { throw Failure.badRequest("position must be 1 or more (0 is the everyone role's)") }
        let bits = try permissions.validated(field: "permissions")
        let a = try requireAbove(position, actor, in: server, "create")
        try requireHeld(bits, by: a, channel: nil)
        let roles = d.servers[server]!.permissions.roles
        guard roles.count < Limits.maxRolesPerServer else {
            throw Failure(.limitReached, "a server has at most \(Limits.maxRolesPerServer) roles")
        }
        let role = RoleRecord(serverID: server, id: (roles.keys.max() ?? 0) + 1, name: name, position: position, permissions: bits,
                              createdAt: now)
        return DirectoryDecision(role, [.roleSaved(role)])
    }

    public func updateRole(_ id: RoleID, in server: ServerID, by actor: UserID, name: String?, position: UInt32?,
                           permissions: PermissionOverride?) throws(Failure) -> DirectoryDecision<RoleRecord> {
        _ = try d.seen(by: actor).server(server)
        var r = try d.role(id, in: server)
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
        _ = try d.seen(by: actor).server(server)
        guard id != .everyone else { throw Failure.badRequest("the everyone role cannot be deleted") }
        let r = try d.role(id, in: server)
        _ = try requireAbove(r.position, actor, in: server, "delete")
        var holders: [MemberRecord] = []
        for var m in d.servers[server]!.members.values where m.roles.contains(id) {
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

    fileprivate func changeRoles(_ id: RoleID, of user: UserID, in server: ServerID, by actor: UserID,
                             grant: Bool) throws(Failure) -> DirectoryDecision<MemberRecord> {
        _ = try d.seen(by: actor).server(server)
        guard id != .everyone else { throw Failure.badRequest("every member holds the everyone role; it is not granted") }
        let r = try d.role(id, in: server)
        guard var m = d.servers[server]!.members[user] else { throw Failure.notFound("\(user) is not a member of server \(server)") }
        _ = try requireAbove(r.position, actor, in: server, grant ? "grant" : "take back")
        guard m.roles.contains(id) != grant else { return DirectoryDecision(m, []) }
        if grant { m.roles = (m.roles + [id]).sorted() } else { m.roles.removeAll { $0 == id } }
        return DirectoryDecision(m, [.memberSaved(m)])
    }

    // MARK: Overrides

    /// Sets an override on a channel (for a role or a member) or on the
    /// server (for a member); Inherit on every bit removes it.
    public func setOverride(_ o: OverrideRecord, by actor: UserID) throws(Failure) -> DirectoryDecision<OverrideRecord> {
        _ = try d.seen(by: actor).server(o.serverID)
        if o.channelID != 0 {
            guard let c = d.channels[o.channelID], c.serverID == o.serverID, d.canView(actor, c) else { throw Directory.channelNotFound(o.channelID) }
        }
        let bits = try o.permissions.validated(field: "permissions", within: o.channelID == 0 ? .all : .perChannel)
        let a = d.servers[o.serverID]!.members[actor]!
        switch o.target {
        case .role(let id):
            guard o.channelID != 0 else { throw Failure.badRequest("a role's bits on the server are set with UpdateRole") }
            _ = try requireAbove(try d.role(id, in: o.serverID).position, actor, in: o.serverID, "override")
        case .member(let user):
            guard let target = d.servers[o.serverID]!.members[user] else {
                throw Failure.notFound("\(user) is not a member of server \(o.serverID)")
            }
            try requireOutranks(actor, target, "override")
        }
        try requireHeld(bits, by: a, channel: o.channelID == 0 ? nil : o.channelID)
        var saved = o
        saved.permissions = bits
        return DirectoryDecision(saved, [.overrideSaved(saved)])
    }
    // MARK: Helpers

    private func rank(_ m: MemberRecord) -> UInt64 { m.rank(among: d.servers[m.serverID]?.permissions.roles) }

    func requireOutranks(_ actor: UserID, _ target: MemberRecord, _ verb: String) throws(Failure) {
        guard let a = d.servers[target.serverID]?.members[actor], rank(a) > rank(target) else {
            throw Failure.forbidden("you may only \(verb) members whose highest role is below yours in server \(target.serverID)")
        }
    }

    /// The actor as a member, ranked above `position`.
    fileprivate func requireAbove(_ position: UInt32, _ actor: UserID, in server: ServerID, _ what: String) throws(Failure) -> MemberRecord {
        let a = d.servers[server]!.members[actor]!
        guard rank(a) > UInt64(position) else {
            throw Failure.forbidden("you may only \(what) roles below your highest role in server \(server)")
        }
        return a
    }

    /// A non-owner grants only bits it holds itself (where the grant applies).
    fileprivate func requireHeld(_ bits: PermissionOverride, by actor: MemberRecord, channel: ChannelID?) throws(Failure) {
        guard !actor.isOwner, let held = d.permissions(of: actor.userID, in: actor.serverID, channel: channel) else { return }
        let extra = bits.allow.subtracting(held)
        guard extra.isEmpty else { throw Failure.forbidden("you may not allow \(extra.description), which you do not hold yourself") }
    }

    fileprivate func admit(_ user: UserID, to id: ServerID, now: UInt64, consumedInvite: Bool) -> DirectoryDecision<MemberRecord> {
        let m = MemberRecord(serverID: id, userID: user, role: .member, joinedAt: now)
        return DirectoryDecision(m, consumedInvite ? [.memberSaved(m), .inviteRemoved(id, user)] : [.memberSaved(m)])
    }

    fileprivate static func validate(name: String, icon: String, custom: String, iconField: String) throws(Failure) {
        try Validation.name(name, field: "name")
        try Validation.text(icon, field: iconField, maxCharacters: Limits.maxIconLength)
        try Validation.custom(custom, field: "custom")
    }
}

extension Directory {
    /// Decides requests that would change the directory.
    public var decide: DirectoryDecisions { DirectoryDecisions(d: self) }
}
