// Blocking, and whom one accepts direct messages from, in the SDK (docs/features.md "Blocking").

import GuildhallWire

extension GuildhallClient.Directs {
    /// Blocks `user`: their direct messages and typing stop reaching you, and you cannot write to them until you unblock.
    public func block(_ user: String) async throws {
        var r = GHBlockUser()
        r.userID = user
        try await client.expectOK(.blockUser(r))
    }

    public func unblock(_ user: String) async throws {
        var r = GHUnblockUser()
        r.userID = user
        try await client.expectOK(.unblockUser(r))
    }

    /// The users you block, sorted.
    public func blockedUsers() async throws -> [String] {
        try await client.expect(.listBlockedUsers(GHListBlockedUsers())) { if case .userIds(let l) = $0 { l.userIds } else { nil } }
    }

    /// Accept direct messages only from people you share a server with (true), or from everyone; returns the choice now.
    @discardableResult
    public func setDirectMessagePrivacy(serverMatesOnly: Bool) async throws -> Bool {
        var r = GHSetDirectMessagePrivacy()
        r.serverMatesOnly = serverMatesOnly
        return try await client.expect(.setDmPrivacy(r)) { if case .dmPrivacy(let p) = $0 { p.serverMatesOnly } else { nil } }
    }

    /// Whether you accept direct messages only from people you share a server with.
    public func directMessagePrivacy() async throws -> Bool {
        try await client.expect(.getDmPrivacy(GHGetDirectMessagePrivacy())) { if case .dmPrivacy(let p) = $0 { p.serverMatesOnly } else { nil } }
    }
}
