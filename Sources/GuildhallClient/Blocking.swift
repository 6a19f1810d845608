// Blocking in the SDK (docs/features.md "Blocking").

import GuildhallWire

extension GuildhallClient {
    /// Blocks `user`: their direct messages and typing stop reaching you, and you cannot write to them until you unblock.
    public func block(_ user: String) async throws {
        var r = GHBlockUser()
        r.userID = user
        try await expectOK(.blockUser(r))
    }

    public func unblock(_ user: String) async throws {
        var r = GHUnblockUser()
        r.userID = user
        try await expectOK(.unblockUser(r))
    }

    /// The users you block, sorted.
    public func blockedUsers() async throws -> [String] {
        try await expect(.listBlockedUsers(GHListBlockedUsers())) { if case .userIds(let l) = $0 { l.userIds } else { nil } }
    }
}
