// Moderation at the guild's home (docs/features.md "Moderation"): timing
// members out, the checks a send, a reaction and typing pass (a timeout;
// a channel's slow mode), and lifting bans whose end has come. Decisions
// are GuildhallCore's Moderation.swift; changes queue behind the server's
// other directory changes. When each member last sent in a slow channel is
// kept in memory only (one entry per member who sent there): after a
// restart the first message is never held back.
// Loop thread only.

import GuildhallCore
import GuildhallWire

final class Moderation: HomePart {
    unowned let services: HomeServices
    /// Timeouts and lifted bans are changes to a server, queued and written as its other changes are.
    private unowned let requests: DirectoryRequests
    private unowned let auditTrail: AuditTrail
    /// Per slow-mode channel, when each member's last message was accepted.
    private var lastSent: [ChannelID: [UserID: UInt64]] = [:]
    /// The next time a ban ends (nil: none known), so the sweep looks only then.
    private var nextBanEnd: UInt64? = 0
    /// Bans being lifted now, so the sweep does not ask twice.
    private var lifting: Set<String> = []

    init(services: HomeServices, requests: DirectoryRequests, auditTrail: AuditTrail) {
        self.services = services
        self.requests = requests
        self.auditTrail = auditTrail
    }
}

extension Moderation {
    func timeoutMember(_ r: GHTimeoutMember, id: UInt64, from s: HomeSession) {
        requests.change(r.serverID, id: id, from: s) { () throws(Failure) in
            let before = self.directory.timedOut(r.userID, in: r.serverID, at: self.now()) ?? 0
            let decision = try self.directory.decide.timeout(r.userID, in: r.serverID, until: r.until, by: s.user, now: self.now())
            var until = AuditDiff()
            until.field("until", before, r.until > self.now() ? r.until : 0)
            let audit = try self.requests.audit(.memberTimedOut, r.serverID, by: s, target: r.userID, changes: until.changes,
                                                              reason: r.reason)
            // The member as the timeout leaves them (the Directory takes it only once stored).
            var after = self.member(r.userID, r.serverID)
            after.timeoutUntil = r.until > self.now() ? r.until : 0
            let notice = Notice(.memberTimedOut, .server(r.serverID, isPublic: false), actor: s.user, targeted: [r.userID]) { $0.member = after }
            return self.requests.effects(decision, also: audit, reply: .read(.member(r.userID, of: r.serverID)),
                                                       notices: [notice])
        }
    }

    /// The member as the wire shows it, with their timeout.
    func member(_ user: UserID, _ server: ServerID) -> GHMember {
        guard let m = directory.member(user, of: server) else { return GHMember.with { $0.serverID = server; $0.userID = user } }
        var e = GHMember(m)
        e.timeoutUntil = directory.timedOut(user, in: server, at: now()) ?? 0
        return e
    }

    // MARK: Checks

    /// A timed-out member may not send, react or type in the server.
    func requireNotTimedOut(_ user: UserID, in server: ServerID, at now: UInt64? = nil) throws(Failure) {
        guard let until = directory.timedOut(user, in: server, at: now ?? self.now()) else { return }
        throw Failure.forbidden("you are timed out in server \(server) until \(until) (ms since 1970)")
    }

    /// A send into channel `c` by `user`: not timed out, and not within the channel's slow mode (429, with when to try).
    func requireMaySend(_ user: UserID, in c: ChannelRecord, at now: UInt64) throws(Failure) {
        try requireNotTimedOut(user, in: c.serverID, at: now)
        guard c.slowModeSeconds > 0 else { return }
        let wait = ModerationRules.slowModeWait(lastSent: lastSent[c.id]?[user], seconds: c.slowModeSeconds, now: now)
        guard wait > 0, !exempt(user, from: c) else { return }
        throw Failure.rateLimited("slow mode: one message every \(c.slowModeSeconds) s in this channel; wait \(wait) ms",
                                  retryAfterMs: UInt32(clamping: wait))
    }

    private func exempt(_ user: UserID, from c: ChannelRecord) -> Bool {
        let bits = directory.permissions(of: user, in: c.serverID, channel: c.id) ?? []
        return !bits.isDisjoint(with: [.manageChannels, .bypassSlowmode])
    }

    /// A message of `user` was accepted in `c`: its slow mode counts from now.
    func sent(_ user: UserID, in c: ChannelRecord) {
        guard c.slowModeSeconds > 0 else { return }
        lastSent[c.id, default: [:]][user] = now()
    }

    // MARK: Bans with an end

    /// Each tick of the home's timer: bans whose end came are lifted, as
    /// `UnbanMember` would, in turn with the server's other changes.
    func liftEndedBans() {
        let now = now()
        guard let next = nextBanEnd, now >= next else { return }
        let (ended, after) = directory.endedBans(at: now)
        nextBanEnd = after
        for b in ended where lifting.insert(Self.key(b)).inserted {
            change(.server(b.serverID)) { [self] in
                // Lifted (or made again) meanwhile: nothing to do.
                guard let still = directory.ban(of: b.userID, in: b.serverID), still == b else {
                    lifting.remove(Self.key(b))
                    return nil
                }
                let audit = auditTrail.serverEntry(.memberUnbanned, in: b.serverID, target: b.userID)
                let lifted = DirectoryChange.banRemoved(b.serverID, b.userID)
                var e = Effects(writes: [.directory(lifted), audit], followUps: [.banLifted(b)])
                e.changes = [.directory([lifted])]
                e.notices = [Notice(.memberUnbanned, .server(b.serverID, isPublic: false), actor: b.actor, targeted: [b.userID]) {
                    $0.member.serverID = b.serverID
                    $0.member.userID = b.userID
                }]
                return e
            }
        }
    }

    /// The lifting of an ended ban settled; not stored, the next sweep tries again.
    func lifted(_ b: BanRecord, stored: Bool) {
        lifting.remove(Self.key(b))
        if stored {
            log.info("ban ended", ["server": b.serverID, "user": b.userID])
        } else {
            nextBanEnd = now()
        }
    }

    private static func key(_ b: BanRecord) -> String { "\(b.serverID) \(b.userID)" }

    /// A ban with an end was made: the sweep looks at it when it comes.
    func banEnds(at time: UInt64) {
        guard time > 0 else { return }
        nextBanEnd = min(nextBanEnd ?? .max, time)
    }
}
