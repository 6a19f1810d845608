// The SDK's calls on roles and permissions (docs/features.md). Permission sets are
// `Permission` bits ORed into a UInt64 (`GHPermission.bits`).

import GuildhallWire

extension GHPermission {
    /// This permission as a bit of a permission set.
    public var bits: UInt64 { UInt64(rawValue) }
}

extension GHPermissionBits {
    /// Allow these, deny those, inherit the rest.
    public init(allow: [GHPermission] = [], deny: [GHPermission] = []) {
        self.init()
        self.allow = allow.reduce(0) { $0 | $1.bits }
        self.deny = deny.reduce(0) { $0 | $1.bits }
    }
}

extension GuildhallClient.Roles {
    private func role(_ body: GHRequest.OneOf_Body) async throws -> GHRoleInfo {
        try await client.expect(body) { if case .role(let r) = $0 { r } else { nil } }
    }

    public func create(in server: UInt64, name: String, position: UInt32, permissions: GHPermissionBits) async throws -> GHRoleInfo {
        var r = GHCreateRole()
        r.serverID = server; r.name = name; r.position = position; r.permissions = permissions
        return try await role(.createRole(r))
    }

    public func update(_ id: UInt64, in server: UInt64, name: String? = nil, position: UInt32? = nil,
                       permissions: GHPermissionBits? = nil) async throws -> GHRoleInfo {
        var r = GHUpdateRole()
        r.serverID = server; r.roleID = id
        if let name { r.name = name }
        if let position { r.position = position }
        if let permissions { r.permissions = permissions }
        return try await role(.updateRole(r))
    }

    public func delete(_ id: UInt64, in server: UInt64) async throws {
        var r = GHDeleteRole()
        r.serverID = server; r.roleID = id
        try await client.expectOK(.deleteRole(r))
    }

    public func grant(_ id: UInt64, to user: String, in server: UInt64) async throws -> GHMember {
        var r = GHGrantRole()
        r.serverID = server; r.userID = user; r.roleID = id
        return try await client.member(.grantRole(r))
    }

    public func takeBack(_ id: UInt64, from user: String, in server: UInt64) async throws -> GHMember {
        var r = GHTakeBackRole()
        r.serverID = server; r.userID = user; r.roleID = id
        return try await client.member(.takeBackRole(r))
    }

    /// A channel's override for a role (`role`) or a member (`user`); with
    /// `channel` 0, a member's override on the server. All-inherit bits remove it.
    public func setOverride(in server: UInt64, channel: UInt64 = 0, role: UInt64? = nil, user: String? = nil,
                            _ permissions: GHPermissionBits) async throws -> GHPermissionOverride {
        var o = GHPermissionOverride()
        o.serverID = server; o.channelID = channel; o.permissions = permissions
        if let role { o.roleID = role }
        if let user { o.userID = user }
        var r = GHSetPermissionOverride()
        r.override = o
        return try await client.expect(.setPermissionOverride(r)) { if case .override(let o) = $0 { o } else { nil } }
    }

    public func list(of server: UInt64) async throws -> GHRoleList {
        var r = GHListRoles()
        r.serverID = server
        return try await client.expect(.listRoles(r)) { if case .roles(let l) = $0 { l } else { nil } }
    }

    /// What `user` (the caller when empty) may do on the server, or in `channel`.
    public func permissions(in server: UInt64, channel: UInt64 = 0, of user: String = "") async throws -> GHPermissions {
        var r = GHGetPermissions()
        r.serverID = server; r.channelID = channel; r.userID = user
        return try await client.expect(.getPermissions(r)) { if case .permissions(let p) = $0 { p } else { nil } }
    }
}
