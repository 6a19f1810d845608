// Invite links in the SDK (docs/features.md "Invite links"): make, list and
// revoke a server's codes; look a code up before joining, and join by it.

import GuildhallWire

extension GuildhallClient.Invites {
    /// A new code for `server` (CREATE_INVITES), landing in `channel` (0: the first one you may view).
    public func create(in server: UInt64, channel: UInt64 = 0, maxAgeSeconds: UInt64 = 0, maxUses: UInt32 = 0) async throws -> GHInviteCode {
        var r = GHCreateInviteCode()
        r.serverID = server
        r.channelID = channel
        r.maxAgeSeconds = maxAgeSeconds
        r.maxUses = maxUses
        return try await client.expect(.createInviteCode(r)) { if case .inviteCode(let c) = $0 { c } else { nil } }
    }

    /// The server's live codes, newest first (all with MANAGE_SERVER, else your own).
    public func list(of server: UInt64) async throws -> [GHInviteCode] {
        var r = GHListInviteCodes()
        r.serverID = server
        return try await client.expect(.listInviteCodes(r)) { if case .inviteCodes(let l) = $0 { l.codes } else { nil } }
    }

    public func revoke(_ code: String) async throws {
        var r = GHRevokeInviteCode()
        r.code = code
        try await client.expectOK(.revokeInviteCode(r))
    }

    /// What a code leads to: the server's name, icon and member count, and the channel.
    public func lookUp(_ code: String) async throws -> GHInviteCode {
        var r = GHLookUpInvite()
        r.code = code
        return try await client.expect(.lookUpInvite(r)) { if case .inviteCode(let c) = $0 { c } else { nil } }
    }

    /// Joins the server a code leads to; the answer says where to land.
    @discardableResult
    public func join(_ code: String) async throws -> GHInviteCode {
        var r = GHJoinByInvite()
        r.code = code
        return try await client.expect(.joinByInvite(r)) { if case .inviteCode(let c) = $0 { c } else { nil } }
    }
}
