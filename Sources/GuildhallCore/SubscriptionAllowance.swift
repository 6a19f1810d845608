// Per-user subscription limits counted across homes (README "What clients
// receive": limits count per user across the user's sessions). A
// subscription lives at the home of its target's guild, so no guild home
// sees a user's whole count; the user's home keeps it here:
//
//   held      the targets guild homes report the user holds (each guild
//             home reports when its tally of a target goes 0 -> 1 -> 0,
//             in order);
//   reserved  targets granted to a subscribe request and not yet reported:
//             a grant is taken from the limit at once, so two requests on
//             two guild homes cannot both take the last place.
//
// A subscribe request asks here first; each new target is granted while
// held + reserved stays within the limit. A reservation ends when the guild
// home reports the target held (it becomes held), when the gateway says the
// subscribe failed for it, or after `reservationMs` (a gateway that never
// said). Targets key as the book's tallies do: channel kinds by channel,
// server kinds by server. Pure.

public struct SubscriptionAllowance: Sendable {
    /// A reservation still unreported after this long is dropped.
    public static let reservationMs: UInt64 = 30_000

    private struct Count: Sendable {
        var held: Set<SubscriptionTarget> = []
        var reserved: [SubscriptionTarget: UInt64] = [:]
        var isEmpty: Bool { held.isEmpty && reserved.isEmpty }
    }

    private var counts: [UserID: [SubscriptionKind: Count]] = [:]

    public init() {}

    /// Whether each of `targets` may be subscribed under `limit`; new ones are reserved.
    public mutating func grant(_ user: UserID, _ kind: SubscriptionKind, _ targets: [SubscriptionTarget], limit: Int,
                               now: UInt64) -> [Bool] {
        var c = counts[user]?[kind] ?? Count()
        c.reserved = c.reserved.filter { now < $0.value + Self.reservationMs }
        let granted = targets.map { t -> Bool in
            let key = Self.key(kind, t)
            if c.held.contains(key) || c.reserved[key] != nil { return true }
            guard c.held.count + c.reserved.count < limit else { return false }
            c.reserved[key] = now
            return true
        }
        store(c, user, kind)
        return granted
    }

    /// A guild home's report: the user now holds `target`, or no longer does.
    public mutating func report(_ user: UserID, _ kind: SubscriptionKind, _ target: SubscriptionTarget, holds: Bool) {
        var c = counts[user]?[kind] ?? Count()
        let key = Self.key(kind, target)
        c.reserved.removeValue(forKey: key)
        if holds { c.held.insert(key) } else { c.held.remove(key) }
        store(c, user, kind)
    }

    /// The subscribe failed for these targets: their reservations end.
    public mutating func release(_ user: UserID, _ kind: SubscriptionKind, _ targets: [SubscriptionTarget]) {
        guard var c = counts[user]?[kind] else { return }
        for t in targets { c.reserved.removeValue(forKey: Self.key(kind, t)) }
        store(c, user, kind)
    }

    /// Held and reserved targets of `kind`.
    public func count(_ user: UserID, _ kind: SubscriptionKind) -> Int {
        counts[user]?[kind].map { $0.held.count + $0.reserved.count } ?? 0
    }

    static func key(_ kind: SubscriptionKind, _ t: SubscriptionTarget) -> SubscriptionTarget {
        kind.targetsChannel ? SubscriptionTarget(server: 0, channel: t.channel) : SubscriptionTarget(server: t.server)
    }

    private mutating func store(_ c: Count, _ user: UserID, _ kind: SubscriptionKind) {
        if c.isEmpty {
            counts[user]?.removeValue(forKey: kind)
            if counts[user]?.isEmpty == true { counts.removeValue(forKey: user) }
        } else {
            counts[user, default: [:]][kind] = c
        }
    }
}

/// A guild home's report that a user's tally of a target went 0 -> 1 (holds) or 1 -> 0.
public struct TallyChange: Sendable, Codable, Equatable {
    public let user: UserID
    public let kind: Int
    public let server: ServerID
    public let channel: ChannelID
    public let holds: Bool

    public init(user: UserID, kind: SubscriptionKind, target: SubscriptionTarget, holds: Bool) {
        self.user = user
        self.kind = kind.rawValue
        server = target.server
        channel = target.channel
        self.holds = holds
    }

    public var target: SubscriptionTarget { SubscriptionTarget(server: server, channel: channel) }
}
