// Members in the SDK (`client.members`): a server's member list, whole or a
// page at a time (a page also watches the list), and changing a member's role.

import GuildhallWire

extension GuildhallClient.Members {
    /// `reason`: for the server's audit log.
    public func kick(_ user: String, from server: UInt64, reason: String = "") async throws {
        var r = GHKickMember()
        r.serverID = server; r.userID = user; r.reason = reason
        try await client.expectOK(.kickMember(r))
    }

    public func setRole(_ role: GHRole, of user: String, in server: UInt64) async throws -> GHMember {
        var r = GHSetMemberRole()
        r.serverID = server; r.userID = user; r.role = role
        return try await client.member(.setMemberRole(r))
    }

    /// Every member of a server, in list order (page by page; `memberPage` for one page, counts and watching).
    public func list(of server: UInt64) async throws -> [GHMember] {
        var all: [GHMember] = []
        var cursor = ""
        repeat {
            let page = try await page(of: server, cursor: cursor, limit: 1_000)
            all += page.members
            cursor = page.nextCursor
        } while !cursor.isEmpty
        return all
    }

    /// One page of a server's member list, with the member and online counts; `watch` watches its window
    /// (`GuildhallListener.onMemberListUpdate`, and the presence of the members in it).
    /// `query`: only members whose shown name has a word starting with it, or whose id does (not watched).
    public func page(of server: UInt64, cursor: String = "", limit: Int = 100, role: UInt64 = 0, onlineOnly: Bool = false,
                     watch: Bool = false, query: String = "") async throws -> GHMemberList {
        var r = GHListMembers()
        r.serverID = server
        r.query = query
        r.cursor = cursor
        r.limit = UInt32(clamping: limit)
        r.roleID = role
        r.onlineOnly = onlineOnly
        r.watch = watch
        return try await client.expect(.listMembers(r)) { if case .members(let l) = $0 { l } else { nil } }
    }

    /// Ends this session's watch of a server's member list.
    public func stopWatching(of server: UInt64) async throws {
        var r = GHListMembers()
        r.serverID = server
        r.stopWatching = true
        _ = try await client.call(.listMembers(r))
    }
}
