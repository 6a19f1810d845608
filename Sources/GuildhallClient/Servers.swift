// Servers in the SDK (`client.servers`): make, change, hand over and delete
// one; read them; join, invite, accept and leave. Each call returns the
// answer's payload or throws the server's error.

import GuildhallWire

extension GuildhallClient.Servers {
    private func server(_ body: GHRequest.OneOf_Body) async throws -> GHServerInfo {
        try await client.expect(body) { if case .server(let s) = $0 { s } else { nil } }
    }

    public func create(name: String, icon: String = "", custom: String = "", openJoin: Bool = true,
                       allowGuests: Bool = false, discoverable: Bool = false) async throws -> GHServerInfo {
        var r = GHCreateServer()
        r.name = name; r.icon = icon; r.custom = custom; r.openJoin = openJoin; r.allowGuests = allowGuests; r.discoverable = discoverable
        return try await server(.createServer(r))
    }

    /// `iconFileID`: an image uploaded `to: .serverIcon(id)`; the icon becomes a lasting link to it.
    public func update(_ id: UInt64, name: String? = nil, icon: String? = nil, iconFileID: UInt64? = nil, custom: String? = nil,
                       openJoin: Bool? = nil, allowGuests: Bool? = nil, discoverable: Bool? = nil) async throws -> GHServerInfo {
        var r = GHUpdateServer()
        r.serverID = id
        if let iconFileID { r.iconFileID = iconFileID }
        if let discoverable { r.discoverable = discoverable }
        if let allowGuests { r.allowGuests = allowGuests }
        if let name { r.name = name }
        if let icon { r.icon = icon }
        if let custom { r.custom = custom }
        if let openJoin { r.openJoin = openJoin }
        return try await server(.updateServer(r))
    }

    /// Hands a server you own to another member; you keep the `admin` role. Returns the server.
    public func transferOwnership(_ server: UInt64, to user: String) async throws -> GHServerInfo {
        var r = GHTransferOwnership()
        r.serverID = server
        r.userID = user
        return try await self.server(.transferOwnership(r))
    }

    public func delete(_ id: UInt64) async throws {
        var r = GHDeleteServer()
        r.serverID = id
        try await client.expectOK(.deleteServer(r))
    }

    public func get(_ ids: [UInt64]) async throws -> [GHServerInfo] {
        var r = GHGetServers()
        r.serverIds = ids
        return try await client.expect(.getServers(r)) { if case .servers(let l) = $0 { l.servers } else { nil } }
    }

    public func mine() async throws -> [GHServerInfo] {
        try await client.expect(.listMyServers(GHListMyServers())) { if case .servers(let l) = $0 { l.servers } else { nil } }
    }

    public func join(_ id: UInt64) async throws -> GHMember {
        var r = GHJoinServer()
        r.serverID = id
        return try await client.member(.joinServer(r))
    }

    public func invite(_ user: String, to server: UInt64) async throws {
        var r = GHInviteMember()
        r.serverID = server; r.userID = user
        try await client.expectOK(.inviteMember(r))
    }

    public func acceptInvite(_ server: UInt64) async throws -> GHMember {
        var r = GHAcceptInvite()
        r.serverID = server
        return try await client.member(.acceptInvite(r))
    }

    public func leave(_ id: UInt64) async throws {
        var r = GHLeaveServer()
        r.serverID = id
        try await client.expectOK(.leaveServer(r))
    }
}
