// Per-user subscription limits across homes (README "What clients receive":
// limits count per user across the user's sessions). Each subscription
// lives at its target's guild home, which sees only its own part of a
// user's count, so with several homes a subscribe takes three steps:
//   1. its guild homes say which targets could be taken (they exist and the
//      user may see them), taking none;
//   2. the user's home grants, in the request's order, those that fit the
//      user's limit (SubscriptionAllowance, which reserves them);
//   3. the granted go to their guild homes and are taken; the answer keeps
//      every target's place, and the user's home hears which granted ones
//      failed after all (they give their places back).
// So a request answers as on one home: a target one may not see is "not
// found" whatever the count, and only those that could be taken count.
// Guild homes report each user's tallies going 0 -> 1 -> 0 to the user's
// home at the end of their turn. With one home (one loop, no cluster) none
// of this runs: the book's own limit is the whole count. Gateway side and
// home side; loop thread only.

import GuildhallCore
import GuildhallWire

extension HomeRoutes {
    /// The subscribe that takes the three steps, if `body` is one.
    func grantFirst(_ body: GHRequest.OneOf_Body) -> GHSubscribe? {
        guard !alone, case .subscribe(let r) = body, r.operation != .unsubscribe, SubscriptionKind(rawValue: r.type.rawValue) != nil,
              (1...Subscriptions.maxTargetsPerRequest).contains(r.targets.count) else { return nil }
        return r
    }

    /// Step 1: the guild homes check the targets.
    func checkFirst(_ r: GHSubscribe, id: UInt64, from s: Session) {
        guard let places = places(of: r, for: s) else {
            s.homeAnswered()
            return refuseUnserved(id, from: s)
        }
        let gid = newGather(.checksFirst(r), expecting: places.count, id: id, from: s)
        for p in places { home(p).checkSubscriptions(r, gather: gid, session: s.key) }
    }

    /// Step 2: the user's home grants those that could be taken.
    func subscribeChecked(_ r: GHSubscribe, id: UInt64, from s: Session, checks: GHResponse.OneOf_Result) {
        guard case .subscribe(let c) = checks, c.results.count == r.targets.count else { return answerGathered(s, id, checks) }
        let refused = c.results.map { $0.status == .targetOk ? nil : $0 }
        guard refused.contains(where: { $0 == nil }) else { return answerGathered(s, id, checks) }
        guard let h = place(user: s.user) else { return refuseUnserved(id, from: s) }
        s.forwarded(bytes: 0)
        let gid = newGather(.grantsFirst(r, refused: refused), expecting: 1, id: id, from: s)
        home(h).grantSubscriptions(Self.asked(r, refused), gather: gid, session: s.key)
    }

    /// Step 3: the granted go to their guild homes; the rest keep their answers.
    func subscribeGranted(_ r: GHSubscribe, refused checked: [GHTargetResult?], id: UInt64, from s: Session, grants: GHResponse.OneOf_Result) {
        let asked = checked.indices.filter { checked[$0] == nil }
        guard case .subscribe(let verdicts) = grants, verdicts.results.count == asked.count else { return answerGathered(s, id, grants) }
        var refused = checked
        for (i, verdict) in zip(asked, verdicts.results) where verdict.status != .targetOk { refused[i] = verdict }
        let granted = Self.asked(r, refused)
        guard !granted.targets.isEmpty else { return answerGathered(s, id, GatherMerge.granted(r, refused: refused).merged([GatherPart]())) }
        guard let places = places(of: granted, for: s) else {
            refuseUnserved(id, from: s)
            return releaseFailed(r, refused: refused, answer: nil, for: s)
        }
        s.forwarded(bytes: 0)
        gather(.subscribe(granted), id: id, from: s, merge: .granted(r, refused: refused), places: places)
    }

    /// Granted targets the guild homes did not take give their places back.
    func releaseFailed(_ r: GHSubscribe, refused: [GHTargetResult?], answer: GHResponse.OneOf_Result?, for s: Session) {
        guard let kind = SubscriptionKind(rawValue: r.type.rawValue), let h = place(user: s.user) else { return }
        var statuses: [GHTargetStatus?] = refused.map { _ in nil }
        if case .subscribe(let merged)? = answer, merged.results.count == refused.count { statuses = merged.results.map(\.status) }
        let failed = r.targets.indices.filter { refused[$0] == nil && statuses[$0] != .targetOk }.map {
            SubscriptionTarget(server: r.targets[$0].serverID, channel: kind.targetsChannel ? r.targets[$0].channelID : 0)
        }
        if !failed.isEmpty { home(h).releaseSubscriptions(user: s.user, kind: kind, failed) }
    }

    /// The homes that answer for `r`'s targets (nil: in a cluster, none serves some now).
    private func places(of r: GHSubscribe, for s: Session) -> [Int]? {
        let body = GHRequest.OneOf_Body.subscribe(r)
        return switch destination(body, body.rule.target, for: s) {
        case .one(let h): [h]
        case .every: everyPlace
        case .unserved: nil
        }
    }

    /// `r` with only the targets not refused.
    static func asked(_ r: GHSubscribe, _ refused: [GHTargetResult?]) -> GHSubscribe {
        var out = r
        out.targets = r.targets.indices.filter { refused[$0] == nil }.map { r.targets[$0] }
        return out
    }
}

extension Subscriptions {
    static func limitMessage(_ kind: SubscriptionKind, _ limit: Int) -> String {
        "limit reached: at most \(limit) \(GHSubscriptionType(rawValue: kind.rawValue) ?? .unspecified) subscriptions per user"
    }

    /// At the user's home: which of `r`'s targets fit the user's limit, answered as a part.
    func grant(_ r: GHSubscribe, gather gid: UInt64, for s: HomeSession) {
        guard let kind = SubscriptionKind(rawValue: r.type.rawValue) else { return }
        let limit = settings.subscriptionLimits.limit(kind)
        let targets = r.targets.map { SubscriptionTarget(server: $0.serverID, channel: kind.targetsChannel ? $0.channelID : 0) }
        let granted = allowance.grant(s.user, kind, targets, limit: limit, now: services.loop.nowMillis)
        var result = GHSubscribeResult()
        result.results = zip(r.targets, granted).map { t, ok in
            var e = GHTargetResult()
            e.target = t
            if !ok {
                e.status = .targetLimitReached
                e.message = Self.limitMessage(kind, limit)
            }
            return e
        }
        s.port.answerPart(gid, GatherPart(result: .subscribe(result), fromHolder: false))
    }

    /// At the end of the turn: the tallies that moved here, to their users' homes.
    func reportTallies() {
        let changes = book.takeTallyChanges()
        guard !changes.isEmpty else { return }
        var byHome: [Int: [TallyChange]] = [:]
        for c in changes { byHome[services.place(user: c.user), default: []].append(c) }
        for (place, list) in byHome {
            if place == services.index { take(list) } else { services.links.post(.mail(services.index, [.subscriptionTallies(list)]), to: place) }
        }
    }

    /// At the user's home: guild homes' tallies, in the order each sent them.
    func take(_ changes: [TallyChange]) {
        for c in changes {
            guard let kind = SubscriptionKind(rawValue: c.kind) else { continue }
            allowance.report(c.user, kind, c.target, holds: c.holds)
        }
    }
}
