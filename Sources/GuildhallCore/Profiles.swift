// Profiles (docs/features.md "Profiles"): a user's display name and avatar,
// kept at the user's home, and the name a member shows in a server (their
// nickname there, else their display name, else their id). The user's home
// tells every home of a change; each home copies it into the user's member
// records of its servers, so member lists order by name without asking
// anyone, and the copies travel with the guild's log in a cluster. Pure.

/// What others see of a user.
public struct UserProfile: Sendable, Codable, Equatable {
    public var user: UserID
    public var displayName: String
    /// A URL or a file id.
    public var avatar: String
    /// 0: never set.
    public var updatedAt: UInt64

    public init(user: UserID, displayName: String = "", avatar: String = "", updatedAt: UInt64 = 0) {
        self.user = user; self.displayName = displayName; self.avatar = avatar; self.updatedAt = updatedAt
    }

    public static let maxNameCharacters = 64, maxAvatarCharacters = 512

    /// Why a display name or nickname may not be used, or nil ("" is allowed: it clears).
    public static func nameProblem(_ name: String, field: String) -> String? {
        if name.count > maxNameCharacters { return "\(field) has \(name.count) characters; at most \(maxNameCharacters)" }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { return "\(field) must not contain control characters" }
        return nil
    }

    public static func avatarProblem(_ avatar: String) -> String? {
        if avatar.count > maxAvatarCharacters { return "avatar has \(avatar.count) characters; at most \(maxAvatarCharacters)" }
        if avatar.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { return "avatar must not contain control characters" }
        return nil
    }
}

extension MemberRecord {
    /// The name the member shows in the server.
    public var shownName: String { !nickname.isEmpty ? nickname : !displayName.isEmpty ? displayName : userID }

    /// What member lists order by: the shown name, case folded.
    public var listName: String { shownName.lowercased() }

    /// The member with `profile`'s copies; nil when they are already these.
    public func copying(_ profile: UserProfile) -> MemberRecord? {
        guard displayName != profile.displayName || avatar != profile.avatar else { return nil }
        var m = self
        m.displayName = profile.displayName
        m.avatar = profile.avatar
        return m
    }
}

extension DirectoryDecisions {
    /// `actor` sets `user`'s nickname in `server` ("" clears it): their own as any member; another's
    /// (the caller checked MANAGE_NICKNAMES) only below the actor's highest role.
    public func setNickname(_ nickname: String, of user: UserID, in server: ServerID, by actor: UserID) throws(Failure) -> DirectoryDecision<MemberRecord> {
        _ = try d.seen(by: actor).server(server)
        guard let target = d.servers[server]!.members[user] else { throw Failure.notFound("\(user) is not a member of server \(server)") }
        if let problem = UserProfile.nameProblem(nickname, field: "nickname") { throw Failure.badRequest(problem) }
        if user != actor { try requireOutranks(actor, target, "rename") }
        guard target.nickname != nickname else { return DirectoryDecision(target, []) }
        var m = target
        m.nickname = nickname
        return DirectoryDecision(m, [.memberSaved(m)])
    }
}
