// Permission bits, roles and overrides (docs/features.md), and the one function
// that resolves what a member may do in a server or one of its channels.
// Pure; owned by the guild's home through `Directory`.
//
// How a member's permissions in a channel are found. Every level holds, per
// bit, Allow, Deny or nothing (Inherit); the most specific level that says
// something wins. From the least specific to the most:
//   1. the `everyone` role's bits (every member holds it; nothing there means "not allowed");
//   2. the member's roles' bits on the server;
//   3. the member's own override on the server;
//   4. overrides on the channel for the roles the member holds (`everyone`'s first);
//   5. the member's own override on the channel.
// Applying the levels in that order, each replacing the bits it names,
// gives exactly "most specific non-Inherit wins". Within one level several
// roles may disagree: any Allow wins over a Deny, as in Discord, so that
// granting a role can only add what the role says it allows.
// The owner is always allowed everything.

/// What a member may do. Values are the wire's `Permission` bits.
public struct Permission: OptionSet, Sendable, Codable, Hashable {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// See a channel: its messages, history, unread numbers and subscriptions.
    public static let viewChannel = Permission(rawValue: 1 << 0)
    public static let manageServer = Permission(rawValue: 1 << 1)
    public static let manageChannels = Permission(rawValue: 1 << 2)
    public static let manageRoles = Permission(rawValue: 1 << 3)
    public static let sendMessages = Permission(rawValue: 1 << 4)
    public static let mention = Permission(rawValue: 1 << 5)
    public static let mentionEveryone = Permission(rawValue: 1 << 6)
    public static let recallOthers = Permission(rawValue: 1 << 7)
    public static let deleteOthers = Permission(rawValue: 1 << 8)
    public static let invite = Permission(rawValue: 1 << 9)
    public static let kick = Permission(rawValue: 1 << 10)
    public static let ban = Permission(rawValue: 1 << 11)
    public static let manageGuests = Permission(rawValue: 1 << 12)
    public static let requestReceipts = Permission(rawValue: 1 << 13)
    public static let attachFiles = Permission(rawValue: 1 << 14)
    /// Make invite codes (InviteCodes.swift).
    public static let createInvites = Permission(rawValue: 1 << 15)
    /// Time members out (Moderation.swift).
    public static let moderateMembers = Permission(rawValue: 1 << 16)
    /// Send in slow mode without waiting.
    public static let bypassSlowmode = Permission(rawValue: 1 << 17)
    /// Pin and unpin messages (Pins.swift).
    public static let pinMessages = Permission(rawValue: 1 << 18)
    /// Read the server's audit log (AuditLog.swift).
    public static let viewAuditLog = Permission(rawValue: 1 << 19)
    /// Set other members' nicknames (Profiles.swift).
    public static let manageNicknames = Permission(rawValue: 1 << 20)
    /// Make and delete a channel's incoming webhooks (Webhooks.swift).
    public static let manageWebhooks = Permission(rawValue: 1 << 21)

    public static let all = Permission(rawValue: (1 << 22) - 1)
    /// What a new server's `everyone` role allows: taking part, not managing.
    public static let everyoneDefault: Permission = [.viewChannel, .sendMessages, .mention, .requestReceipts, .attachFiles, .createInvites]
    /// What a new server's `admin` role allows: what "owner and admins" could do before roles had bits.
    public static let adminDefault: Permission = [.manageServer, .manageChannels, .mentionEveryone, .recallOthers, .deleteOthers,
                                                  .invite, .kick, .ban, .manageGuests, .createInvites, .moderateMembers, .pinMessages,
                                                  .viewAuditLog, .manageNicknames, .manageWebhooks]

    /// Bits a channel override may name: the ones that mean something per channel.
    public static let perChannel: Permission = [.viewChannel, .manageChannels, .sendMessages, .mention, .mentionEveryone,
                                                .recallOthers, .deleteOthers, .requestReceipts, .attachFiles, .bypassSlowmode, .pinMessages,
                                                .manageWebhooks]

    public static let names: [(Permission, String)] = [
        (.viewChannel, "view channel"), (.manageServer, "manage server"), (.manageChannels, "manage channels"),
        (.manageRoles, "manage roles"), (.sendMessages, "send messages"), (.mention, "mention"),
        (.mentionEveryone, "mention everyone"), (.recallOthers, "recall others' messages"),
        (.deleteOthers, "delete others' messages"), (.invite, "invite"), (.kick, "kick"), (.ban, "ban"),
        (.manageGuests, "manage guests"), (.requestReceipts, "request read receipts"), (.attachFiles, "attach files"),
        (.createInvites, "create invites"), (.moderateMembers, "moderate members"), (.bypassSlowmode, "bypass slow mode"),
        (.pinMessages, "pin messages"), (.viewAuditLog, "view the audit log"), (.manageNicknames, "manage nicknames"),
        (.manageWebhooks, "manage webhooks"),
    ]

    /// The bits' names, for messages a developer reads.
    public var description: String { Self.names.filter { contains($0.0) }.map(\.1).joined(separator: ", ") }
}

/// Per bit Allow, Deny or Inherit (in neither set).
public struct PermissionOverride: Sendable, Codable, Equatable, Hashable {
    public var allow: Permission
    public var deny: Permission

    public init(allow: Permission = [], deny: Permission = []) { self.allow = allow; self.deny = deny }

    public static let inherit = PermissionOverride()
    public var isInherit: Bool { allow.isEmpty && deny.isEmpty }

    /// `p` with this level's word on each bit it names.
    @inline(__always)
    public func applied(to p: Permission) -> Permission { p.subtracting(deny).union(allow) }

    /// One level made of several roles: any Allow wins over a Deny.
    @inline(__always)
    mutating func merge(_ other: PermissionOverride) {
        allow.formUnion(other.allow)
        deny = deny.union(other.deny).subtracting(allow)
    }

    /// A value a client sent: a bit may not be both allowed and denied, nor unknown.
    public func validated(field: String, within known: Permission = .all) throws(Failure) -> PermissionOverride {
        guard allow.intersection(deny).isEmpty else {
            throw Failure.badRequest("\(field): \(allow.intersection(deny).description) both allowed and denied")
        }
        guard known.isSuperset(of: allow.union(deny)) else {
            throw Failure.badRequest("\(field): bits \(allow.union(deny).subtracting(known).rawValue) are not permissions here")
        }
        return self
    }
}

public typealias RoleID = UInt64

extension RoleID {
    /// Held by every member; cannot be deleted, assigned or moved.
    public static let everyone: RoleID = 0
    /// Made with every server for "today's admin"; an ordinary role otherwise.
    public static let admin: RoleID = 1
}

public struct RoleRecord: Sendable, Codable, Equatable {
    public var serverID: ServerID
    public var id: RoleID
    public var name: String
    /// Higher is above. `everyone` is 0; other roles 1 or more.
    public var position: UInt32
    /// The role's bits on the server.
    public var permissions: PermissionOverride
    public var createdAt: UInt64

    public init(serverID: ServerID, id: RoleID, name: String, position: UInt32, permissions: PermissionOverride, createdAt: UInt64) {
        self.serverID = serverID; self.id = id; self.name = name; self.position = position
        self.permissions = permissions; self.createdAt = createdAt
    }

    /// The two roles every server starts with.
    public static func starting(server: ServerID, at time: UInt64) -> [RoleRecord] {
        [RoleRecord(serverID: server, id: .everyone, name: "everyone", position: 0,
                    permissions: PermissionOverride(allow: .everyoneDefault), createdAt: time),
         RoleRecord(serverID: server, id: .admin, name: "admin", position: 1,
                    permissions: PermissionOverride(allow: .adminDefault), createdAt: time)]
    }
}

/// Who an override is for.
public enum OverrideTarget: Sendable, Codable, Hashable {
    case role(RoleID)
    case member(UserID)
}

/// An override on a channel (for a role or a member), or on the server (for a member; `channelID` 0).
public struct OverrideRecord: Sendable, Codable, Equatable {
    public var serverID: ServerID
    public var channelID: ChannelID
    public var target: OverrideTarget
    public var permissions: PermissionOverride

    public init(serverID: ServerID, channelID: ChannelID, target: OverrideTarget, permissions: PermissionOverride) {
        self.serverID = serverID; self.channelID = channelID; self.target = target; self.permissions = permissions
    }
}

/// One server's roles and overrides, and the resolution above.
public struct ServerPermissions: Sendable {
    public private(set) var roles: [RoleID: RoleRecord] = [:]
    private var memberOverrides: [UserID: PermissionOverride] = [:]
    private var channelOverrides: [ChannelID: ChannelOverrides] = [:]
    /// Whether every member views every channel: `everyone` allows it and
    /// nothing denies it anywhere. Kept current by every change.
    public private(set) var viewIsUniform = false

    struct ChannelOverrides: Sendable {
        var roles: [RoleID: PermissionOverride] = [:]
        var members: [UserID: PermissionOverride] = [:]
        var isEmpty: Bool { roles.isEmpty && members.isEmpty }
    }

    public init() {}

    /// What a member holding `memberRoles` may do on the server, or in `channel`.
    public func resolve(_ user: UserID, holding memberRoles: [RoleID], in channel: ChannelID? = nil) -> Permission {
        // Each role's permissions read through `map`, not by binding (a copy of its record and name) or `?.`.
        var p = roles[.everyone].map { $0.permissions.applied(to: []) } ?? []
        if !memberRoles.isEmpty {
            var level = PermissionOverride.inherit
            for id in memberRoles { if let r = roles[id].map({ $0.permissions }) { level.merge(r) } }
            p = level.applied(to: p)
        }
        if let own = memberOverrides[user] { p = own.applied(to: p) }
        guard let channel, let c = channelOverrides[channel] else { return p }
        if let everyone = c.roles[.everyone] { p = everyone.applied(to: p) }
        if !c.roles.isEmpty, !memberRoles.isEmpty {
            var level = PermissionOverride.inherit
            for id in memberRoles { if let o = c.roles[id] { level.merge(o) } }
            p = level.applied(to: p)
        }
        if let own = c.members[user] { p = own.applied(to: p) }
        return p
    }

    /// Whether any override names `channel`: only then can a channel's viewers differ from the server's.
    public func hasOverrides(on channel: ChannelID) -> Bool { channelOverrides[channel] != nil }

    // MARK: Changes

    public mutating func save(_ role: RoleRecord) {
        roles[role.id] = role
        recheckView()
    }

    public mutating func deleteRole(_ id: RoleID) {
        defer { recheckView() }
        roles.removeValue(forKey: id)
        for channel in Array(channelOverrides.keys) {
            channelOverrides[channel]!.roles.removeValue(forKey: id)
            if channelOverrides[channel]!.isEmpty { channelOverrides.removeValue(forKey: channel) }
        }
    }

    private mutating func recheckView() {
        let view = Permission.viewChannel
        viewIsUniform = roles[.everyone]?.permissions.allow.contains(view) == true
            && !roles.values.contains { $0.permissions.deny.contains(view) }
            && !memberOverrides.values.contains { $0.deny.contains(view) }
            && !channelOverrides.values.contains { c in
                c.roles.values.contains { $0.deny.contains(view) } || c.members.values.contains { $0.deny.contains(view) }
            }
    }

    /// Sets (or clears, when Inherit) an override; a server-level role override is the role's own bits.
    public mutating func save(_ o: OverrideRecord) {
        defer { recheckView() }
        let value: PermissionOverride? = o.permissions.isInherit ? nil : o.permissions
        switch (o.channelID, o.target) {
        case (0, .member(let user)): memberOverrides[user] = value
        case (0, .role(let id)): if let value { roles[id]?.permissions = value }
        case (let channel, .role(let id)):
            channelOverrides[channel, default: ChannelOverrides()].roles[id] = value
            if channelOverrides[channel]!.isEmpty { channelOverrides.removeValue(forKey: channel) }
        case (let channel, .member(let user)):
            channelOverrides[channel, default: ChannelOverrides()].members[user] = value
            if channelOverrides[channel]!.isEmpty { channelOverrides.removeValue(forKey: channel) }
        }
    }

    public mutating func memberLeft(_ user: UserID) {
        defer { recheckView() }
        memberOverrides.removeValue(forKey: user)
        for channel in Array(channelOverrides.keys) where channelOverrides[channel]!.members[user] != nil {
            channelOverrides[channel]!.members.removeValue(forKey: user)
            if channelOverrides[channel]!.isEmpty { channelOverrides.removeValue(forKey: channel) }
        }
    }

    public mutating func channelDeleted(_ channel: ChannelID) {
        channelOverrides.removeValue(forKey: channel)
        recheckView()
    }

    /// Every override, server-level member ones first, then by channel; for listing.
    public var overrides: [OverrideRecord] {
        var list: [OverrideRecord] = []
        let server = roles.first?.value.serverID ?? 0
        for (user, o) in memberOverrides.sorted(by: { $0.key < $1.key }) {
            list.append(OverrideRecord(serverID: server, channelID: 0, target: .member(user), permissions: o))
        }
        for (channel, c) in channelOverrides.sorted(by: { $0.key < $1.key }) {
            for (id, o) in c.roles.sorted(by: { $0.key < $1.key }) {
                list.append(OverrideRecord(serverID: server, channelID: channel, target: .role(id), permissions: o))
            }
            for (user, o) in c.members.sorted(by: { $0.key < $1.key }) {
                list.append(OverrideRecord(serverID: server, channelID: channel, target: .member(user), permissions: o))
            }
        }
        return list
    }

    /// The override a target has on a channel (0: the server), or Inherit.
    public func override(on channel: ChannelID, for target: OverrideTarget) -> PermissionOverride {
        switch (channel, target) {
        case (0, .member(let user)): memberOverrides[user] ?? .inherit
        case (0, .role(let id)): roles[id]?.permissions ?? .inherit
        case (let c, .role(let id)): channelOverrides[c]?.roles[id] ?? .inherit
        case (let c, .member(let user)): channelOverrides[c]?.members[user] ?? .inherit
        }
    }
}
