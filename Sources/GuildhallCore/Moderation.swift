// Moderation (docs/features.md "Moderation"): timeouts, bans with an end,
// and slow mode. A timed-out member stays a member but cannot send, react
// or type until the timeout ends; a ban with an end is lifted when it
// comes (the home's sweep, Home/Directory/Moderation.swift); slow mode makes
// a member wait between messages in a channel unless they hold
// MANAGE_CHANNELS or BYPASS_SLOWMODE there. Pure.

/// A member's timeout.
public struct TimeoutRecord: Sendable, Codable, Equatable {
    public var serverID: ServerID
    public var userID: UserID
    /// Milliseconds since 1970.
    public var until: UInt64
    public var actor: UserID

    public init(serverID: ServerID, userID: UserID, until: UInt64, actor: UserID) {
        self.serverID = serverID; self.userID = userID; self.until = until; self.actor = actor
    }
}

public enum ModerationRules {
    /// As Discord: a timeout lasts at most 28 days.
    public static let maxTimeoutMs: UInt64 = 28 * 86_400_000
    public static let maxSlowModeSeconds: UInt32 = 21_600

    /// Milliseconds until a member who last sent at `last` may send again in a channel of `seconds` slow mode (0: now).
    public static func slowModeWait(lastSent last: UInt64?, seconds: UInt32, now: UInt64) -> UInt64 {
        guard seconds > 0, let last else { return 0 }
        let next = last + UInt64(seconds) * 1_000
        return next > now ? next - now : 0
    }
}

extension Directory {
    /// Until when `user` is timed out in `server` at `now`; nil when not.
    /// `now` is read only for a user with a timeout (every send asks this).
    public func timedOut(_ user: UserID, in server: ServerID, at now: @autoclosure () -> UInt64) -> UInt64? {
        guard !timeouts.isEmpty, let until = timeouts[server]?[user], until > now() else { return nil }
        return until
    }

    public func ban(of user: UserID, in server: ServerID) -> BanRecord? { servers[server]?.bans[user] }

    /// Bans whose end has come by `now`, and the next end after it (nil: none).
    public func endedBans(at now: UInt64) -> (ended: [BanRecord], next: UInt64?) {
        var ended: [BanRecord] = [], next: UInt64?
        for s in servers.values {
            for b in s.bans.values where b.expiresAt != 0 {
                if b.expiresAt <= now { ended.append(b) } else { next = min(next ?? .max, b.expiresAt) }
            }
        }
        return (ended, next)
    }
}

extension DirectoryDecisions {
    /// Times `user` out in `server` until `until` (0 or past: lifts it); `actor` holds MODERATE_MEMBERS and outranks them.
    public func timeout(_ user: UserID, in server: ServerID, until: UInt64, by actor: UserID, now: UInt64) throws(Failure) -> DirectoryDecision<MemberRecord> {
        _ = try d.seen(by: actor).server(server)
        guard let target = d.servers[server]!.members[user] else { throw Failure.notFound("\(user) is not a member of server \(server)") }
        try requireOutranks(actor, target, "time out")
        if until > now + ModerationRules.maxTimeoutMs { throw Failure.badRequest("a timeout lasts at most 28 days") }
        guard until > now else { return DirectoryDecision(target, [.timeoutRemoved(server, user)]) }
        return DirectoryDecision(target, [.timeoutSaved(TimeoutRecord(serverID: server, userID: user, until: until, actor: actor))])
    }
}
