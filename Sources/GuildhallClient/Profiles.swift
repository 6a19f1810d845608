// Profiles in the SDK (docs/features.md "Profiles"): one's display name and
// avatar, others' profiles, and nicknames in a server; and a device's push
// token (docs/features.md "Push").

import GuildhallWire

extension GuildhallClient.People {
    /// Sets what is given ("" clears it); returns the profile as others now see it.
    @discardableResult
    /// `avatarFileID`: an image uploaded `to: .avatar`; the avatar becomes a lasting link to it.
    public func setProfile(displayName: String? = nil, avatar: String? = nil, avatarFileID: UInt64? = nil) async throws -> GHUserProfile {
        var r = GHSetProfile()
        if let displayName { r.displayName = displayName }
        if let avatar { r.avatar = avatar }
        if let avatarFileID { r.avatarFileID = avatarFileID }
        return try await client.expect(.setProfile(r)) { if case .profile(let p) = $0 { p } else { nil } }
    }

    /// Users' profiles in the order asked (at most 100); one who set none has only the id.
    public func profiles(_ ids: [String]) async throws -> [GHUserProfile] {
        var r = GHGetUsers()
        r.userIds = ids
        return try await client.expect(.getUsers(r)) { if case .users(let l) = $0 { l.users } else { nil } }
    }
}

extension GuildhallClient.Members {
    /// Sets a nickname in `server` ("" clears it): your own, or `user`'s with MANAGE_NICKNAMES.
    @discardableResult
    public func setNickname(_ nickname: String, in server: UInt64, of user: String = "", reason: String = "") async throws -> GHMember {
        var r = GHSetNickname()
        r.serverID = server
        r.userID = user
        r.nickname = nickname
        r.reason = reason
        return try await client.expect(.setNickname(r)) { if case .member(let m) = $0 { m } else { nil } }
    }
}

extension GuildhallClient.People {
    /// Registers this device's push token: while you have no session online, mentions and direct
    /// messages reach the operator's push gateway for it (docs/features.md "Push").
    public func registerPushToken(_ token: String, platform: String, previews: Bool = true) async throws {
        var r = GHRegisterPushToken()
        r.token = token
        r.platform = platform
        r.previews = previews
        try await client.expectOK(.registerPushToken(r))
    }

    /// Forgets this device's push token.
    public func unregisterPushToken() async throws { try await client.expectOK(.unregisterPushToken(GHUnregisterPushToken())) }
}
