// "Direct messages only from server-mates" (docs/features.md "Blocking").
// Every home plays two parts:
//
// - As a user's home it keeps the choice (`SetDirectMessagePrivacy`,
//   stored before it is answered) and tells every home of a change, which
//   drops what it kept about the user.
// - As the home deciding a direct message (a pair's home, a group's) it asks
//   every home whether the sender may write to the recipients (`check`):
//   the recipients' homes answer with their choices, every home whether a
//   server it holds has both. A yes is kept for `keptMs`, so a chat does
//   not ask again per message (a no is not: one who just joined a shared
//   server should not wait for it to expire); a home that does not answer within
//   `deadlineMs` leaves the question unanswered (503), unless the parts
//   that came decide it.
//
// Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

final class DirectPrivacy: HomePart {
    unowned let services: HomeServices
    /// Users homed here who accept direct messages only from server-mates.
    private(set) var serverMatesOnly: Set<UserID> = []
    /// Questions asked of every home, by token.
    private var asking: [UInt64: Question] = [:]
    private var nextToken: UInt64 = 0
    /// Pairs found allowed (sender and recipient), and when.
    private var kept: [Pair: UInt64] = [:]

    static let keptMs: UInt64 = 30_000, deadlineMs: UInt64 = 5_000

    private struct Pair: Hashable {
        let from: UserID
        let to: UserID
    }

    private final class Question {
        let from: UserID
        let to: [UserID]
        let askedAt: UInt64
        var waiting: Int
        var parts: [DirectVerdict] = []
        let then: (Failure?) -> Void
        init(from: UserID, to: [UserID], askedAt: UInt64, waiting: Int, then: @escaping (Failure?) -> Void) {
            self.from = from; self.to = to; self.askedAt = askedAt; self.waiting = waiting; self.then = then
        }
    }

    init(services: HomeServices) { self.services = services }

    func load(_ users: [UserID]) { serverMatesOnly.formUnion(users) }

    /// A choice, once stored (`StateChange.directPrivacySet`).
    /// A user's choice, once stored (`StateChange.directPrivacySet`): every
    /// other home forgets what it kept of it, and so does this one.
    func chosen(_ user: UserID, serverMatesOnly only: Bool) {
        if only { serverMatesOnly.insert(user) } else { serverMatesOnly.remove(user) }
        for place in services.gateway.routes.everyPlace where place != services.index {
            services.links.post(.mail(services.index, [.directPrivacyChanged(user)]), to: place)
        }
        forget(user)
    }

    /// Forgets the choices of users whose shards moved to another node.
    func forget(where drop: (UserID) -> Bool) { serverMatesOnly = serverMatesOnly.filter { !drop($0) } }
}

// MARK: Requests (at the user's home)

extension DirectPrivacy {
    func set(_ r: GHSetDirectMessagePrivacy, id: UInt64, from s: HomeSession) {
        let only = r.serverMatesOnly
        guard serverMatesOnly.contains(s.user) != only else { return s.respond(id, .dmPrivacy(Self.answer(only))) }
        var e = Effects(writes: [.directPrivacy(s.user, serverMatesOnly: only)], reply: .result(.dmPrivacy(Self.answer(only))))
        e.changes = [.directPrivacySet(s.user, serverMatesOnly: only)]
        runner.carryOut(e, answering: id, to: s)
    }

    func get(id: UInt64, from s: HomeSession) { s.respond(id, .dmPrivacy(Self.answer(serverMatesOnly.contains(s.user)))) }

    private static func answer(_ only: Bool) -> GHDirectMessagePrivacy {
        var a = GHDirectMessagePrivacy()
        a.serverMatesOnly = only
        return a
    }

    /// `user` changed their choice: what was kept about them is stale.
    func forget(_ user: UserID) { kept = kept.filter { $0.key.to != user } }
}

// MARK: Asking every home

extension DirectPrivacy {
    /// Whether `from` may write to each of `to`: `then` gets nil, or the
    /// failure to answer with (403 naming who refuses; 503 when a home did not answer).
    func check(from: UserID, to: [UserID], then: @escaping (Failure?) -> Void) {
        let now = now()
        let unknown = to.filter { user in kept[Pair(from: from, to: user)].map { now - $0 >= Self.keptMs } ?? true }
        guard !unknown.isEmpty else { return then(nil) }
        let places = services.gateway.routes.everyPlace
        nextToken += 1
        let token = nextToken
        asking[token] = Question(from: from, to: unknown, askedAt: now, waiting: places.count, then: then)
        for place in places {
            if place == services.index {
                heard(token: token, parts(from: from, to: unknown))
            } else {
                services.links.post(.mail(services.index, [.directCheck(token: token, from: from, to: unknown)]), to: place)
            }
        }
    }

    /// Another home asks: this home's part for each user.
    func answer(token: UInt64, from: UserID, to: [UserID], asker: Int) {
        services.links.post(.mail(services.index, [.directChecked(token: token, parts(from: from, to: to))]), to: asker)
    }

    private func parts(from: UserID, to: [UserID]) -> [DirectVerdict] {
        let theirs = Set(directory.serverIDs(of: from))
        return to.map { user in
            DirectVerdict(user: user, home: services.place(user: user) == services.index, serverMatesOnly: serverMatesOnly.contains(user),
                          sharesAServer: directory.serverIDs(of: user).contains { theirs.contains($0) })
        }
    }

    /// A home's part arrived.
    func heard(token: UInt64, _ verdicts: [DirectVerdict]) {
        guard let q = asking[token] else { return }
        q.parts += verdicts
        q.waiting -= 1
        if q.waiting <= 0 { settle(token, complete: true) }
    }

    /// Questions past their deadline are settled with what came (the turn's housekeeping).
    func expire(now: UInt64) {
        for (token, q) in asking where now - q.askedAt >= Self.deadlineMs { settle(token, complete: false) }
    }

    private func settle(_ token: UInt64, complete: Bool) {
        guard let q = asking.removeValue(forKey: token) else { return }
        let now = now()
        var failure: Failure?
        for user in q.to {
            guard let allowed = DirectVerdict.allows(q.parts, for: user, complete: complete) else {
                failure = failure ?? Failure(.unavailable, "whether \(user) takes your direct messages could not be learned now; retry")
                continue
            }
            if allowed { kept[Pair(from: q.from, to: user)] = now } else { failure = Self.refusal(user) }
        }
        if kept.count > 100_000 { kept = kept.filter { now - $0.value < Self.keptMs } }
        q.then(failure)
    }

    private static func refusal(_ user: UserID) -> Failure {
        Failure.forbidden("\(user) accepts direct messages only from people they share a server with")
    }
}
