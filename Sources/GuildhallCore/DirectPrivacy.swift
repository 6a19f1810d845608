// Whom a user accepts direct messages from (docs/features.md "Blocking"):
// everyone, or only people they share a server with. No one home knows both
// halves: the user's home knows the choice, and each guild's home whether
// its servers hold both users. So every home answers its part for a pair
// (`DirectVerdict`), and `DirectVerdict.allows` puts the parts together.
// Pure.

/// One home's part of whether `user` takes direct messages from someone.
public struct DirectVerdict: Sendable, Equatable {
    public var user: UserID
    /// Answered by the user's home: `serverMatesOnly` is theirs.
    public var home: Bool
    public var serverMatesOnly: Bool
    /// A server held by this home has both as members.
    public var sharesAServer: Bool

    public init(user: UserID, home: Bool, serverMatesOnly: Bool, sharesAServer: Bool) {
        self.user = user; self.home = home; self.serverMatesOnly = serverMatesOnly; self.sharesAServer = sharesAServer
    }

    /// Whether `user` takes the sender's direct messages, from every home's
    /// parts; nil while the user's home has not answered (or some home that
    /// may hold a shared server, when only one would allow it).
    public static func allows(_ parts: [DirectVerdict], for user: UserID, complete: Bool) -> Bool? {
        let theirs = parts.filter { $0.user == user }
        guard let home = theirs.first(where: \.home) else { return nil }
        if !home.serverMatesOnly || theirs.contains(where: \.sharesAServer) { return true }
        return complete ? false : nil
    }
}
