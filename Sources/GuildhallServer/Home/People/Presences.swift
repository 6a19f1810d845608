// Presence (docs/features.md "Presence"). Every home plays two parts:
//
// - As the home of its users it decides what others see of them
//   (`PresenceBook`): from their sessions, which it admits, from their
//   choice (`SetPresence`, stored with the last-seen time), and from idle
//   sessions (`SetIdle`, which the gateway also sends by its timer). Each
//   change is told to every home (`HomeMail.presence`), batched per turn.
// - As everyone's home it keeps who is not offline, as told (`shown`), and
//   passes each change to the sessions here that hear it: those watching
//   the user (USER_PRESENCE, held at the watcher's user home), the online
//   members of the user's small servers here (the small-server exemption),
//   and the peers of the user's direct conversations held here. A session
//   hears from several homes at times; its gateway keeps the latest per user
//   and coalesces (PresenceFrames.swift). The cost of a change is one mail per
//   home plus the sessions that hear it; nothing scans a server's members.
//
// At login a session hears, from each home, who is not offline among what
// it would hear changes of; a new watch is answered by the watched users'
// homes with their state as it is now (`HomeMail.presenceAsked`).
// Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

final class Presences: HomePart {
    unowned let services: HomeServices
    /// Direct peers hear each other (the user home); a peer's state is made ready
    /// to serve (Reception.serve); member lists show who is online. Built after
    /// this part, and handed to it then (`hear`).
    private unowned var userHome: UserHome!
    private unowned var reception: Reception!
    private unowned var memberLists: MemberLists!
    /// The users homed here.
    private(set) var book = PresenceBook()
    /// Users not offline, as their homes told: what sessions here hear at first.
    private(set) var shown: [UserID: GHPresence] = [:]
    /// USER_PRESENCE held here: who watches each user, and whom each session watches.
    private var watchers: [UserID: Set<SessionKey>] = [:]
    private var watching: [SessionKey: Set<UserID>] = [:]
    /// Changes decided here this turn, told to every home at its end.
    private var changes: [GHPresence] = []
    /// When each user's last change was told (loop time), and the users
    /// whose next change waits for `presence-frame-interval-ms` to pass.
    private var toldAt: [UserID: UInt64] = [:]
    private var held: Set<UserID> = []
    /// Users whose last-seen time did not store (the commit failed): stored again with the next tick.
    private var lastSeenUnsaved: Set<UserID> = []
    /// Users taken over while shown not offline, and the loop time after which
    /// those with no session here yet are offline (`tookOver`).
    private var takenOver: [UserID: UInt64] = [:]
    /// Users `mayHaveLeft` made offline here, with when (wall clock) and until
    /// when (loop time) it is kept: a home that takes them over soon after has
    /// that for their last-seen time, as it never saw them online itself.
    private var leftWithNode: [UserID: (at: UInt64, until: UInt64)] = [:]
    /// Questions about users this home does not serve (yet), answered once it
    /// does, or sent on to their home once another node is named for it (`asked`).
    private var unanswered: [(users: [UserID], key: SessionKey, since: UInt64)] = []

    /// How long a user taken over from another node keeps showing as they were:
    /// their sessions, closed by the move, log in again meanwhile (the SDK's
    /// backoff reaches 5 s), and those that do change nothing others see.
    static let reloginGraceMs: UInt64 = 10_000
    /// How long a question waits for the users' shard to be served.
    static let questionWaitMs: UInt64 = 30_000

    init(services: HomeServices) { self.services = services }

    /// The parts built after this one that it tells.
    func hear(_ userHome: UserHome, _ reception: Reception, _ memberLists: MemberLists) {
        self.userHome = userHome
        self.reception = reception
        self.memberLists = memberLists
    }

    func load(_ stored: [(UserID, PresenceChoice, lastSeen: UInt64)]) {
        for (user, choice, lastSeen) in stored { book.load(user, choice, lastSeen: lastSeen) }
    }

    private func isHomeOf(_ user: UserID) -> Bool { services.place(user: user) == services.index }

    /// The node gave `shards` up to another: their users' sessions end with
    /// the move and log in again at the new home, which shows them as told
    /// from here until then (`tookOver`). So nothing more is told of them
    /// from here: their sessions ending here is not their going offline.
    func gaveUp(shards: Set<Int>) {
        let count = settings.shards
        func leaves(_ user: UserID) -> Bool { shards.contains(ShardPlan.shard(user: user, shards: count)) }
        book.forget(where: leaves)
        takenOver = takenOver.filter { !leaves($0.key) }
        toldAt = toldAt.filter { !leaves($0.key) }
        held = held.filter { !leaves($0) }
        lastSeenUnsaved = lastSeenUnsaved.filter { !leaves($0) }
    }

    /// Whether this home serves `user` now: its loop's share of a shard this node serves.
    private func serves(_ user: UserID) -> Bool { services.map.home(user: user) == services.index && services.servesHere(.user, for: user) }

    /// The home took over `shards` from another node (which may have died with
    /// their users' sessions, and never said they ended): their users others
    /// were told are not offline show as they were until `reloginGraceMs`
    /// passes, and then as their sessions here say (offline, with a last-seen
    /// time, when none logged in again).
    func tookOver(shards: Set<Int>) {
        let until = services.loop.nowMillis + Self.reloginGraceMs, count = settings.shards
        func isTaken(_ user: UserID) -> Bool { services.map.home(user: user) == services.index && shards.contains(ShardPlan.shard(user: user, shards: count)) }
        for (user, p) in shown where isTaken(user) {
            book.takeOver(user, told: ShownPresence(user: user, status: PresenceStatus(rawValue: p.status.rawValue) ?? .online, text: p.customText, lastSeen: 0))
            takenOver[user] = until
        }
        for (user, left) in leftWithNode where isTaken(user) && book.sawLeave(user, at: left.at) { saveLastSeen(user) }
    }
}

// MARK: Requests (at the user's home)

extension Presences {
    func setPresence(_ r: GHSetPresence, id: UInt64, from s: HomeSession) {
        let choice = PresenceChoice(status: PresenceStatus(rawValue: r.status.rawValue) ?? .offline, text: r.customText)
        if let problem = choice.problem { return s.fail(id, .badRequest(problem)) }
        let user = s.user
        // Stored before anyone hears of it; the last-seen time stays as it was.
        let write = StoreWrite.presence(user, choice, lastSeen: book.lastSeen[user] ?? 0)
        var e = Effects(writes: [write], reply: .read(.presence(user)))
        e.changes = [.presenceChosen(user, choice)]
        runner.carryOut(e, answering: id, to: s)
    }

    /// A choice, once stored (`StateChange.presenceChosen`).
    func chosen(_ user: UserID, _ choice: PresenceChoice) {
        book.choose(user, choice)
        settle(user)
    }

    func setIdle(_ r: GHSetIdle, id: UInt64, from s: HomeSession) {
        if book.setIdle(s.user, session: s.key, r.idle) { settle(s.user) }
        s.respond(id, .ok(GHOk()))
    }

    /// USER_PRESENCE subscribe and unsubscribe, held here at the watcher's home.
    func subscribe(_ r: GHSubscribe, id: UInt64, from s: HomeSession) {
        guard r.targets.count <= Subscriptions.maxTargetsPerRequest else {
            return s.fail(id, Failure(.limitReached, "at most \(Subscriptions.maxTargetsPerRequest) targets per request"))
        }
        var result = GHSubscribeResult()
        var asked: [UserID] = []
        var held = watchedByUser(s.user)
        for t in r.targets {
            var entry = GHTargetResult()
            entry.target = t
            let user = t.userID
            if r.operation == .unsubscribe {
                unwatch(user, by: s.key)
            } else if let problem = Validation.userIDProblem(user) {
                entry.status = .targetNotFound
                entry.message = problem
            } else if !held.contains(user) && held.count >= settings.limitUserPresence {
                entry.status = .targetLimitReached
                entry.message = "at most \(settings.limitUserPresence) USER_PRESENCE subscriptions per user (limit-user-presence)"
            } else {
                if watching[s.key, default: []].insert(user).inserted { asked.append(user) }
                watchers[user, default: []].insert(s.key)
                held.insert(user)
            }
            result.results.append(entry)
        }
        s.respond(id, .subscribe(result))
        ask(asked, for: s.key)
    }

    /// The users any session of `user` watches from here.
    private func watchedByUser(_ user: UserID) -> Set<UserID> {
        var all: Set<UserID> = []
        for key in registry.sessions(of: user).keys { all.formUnion(watching[key] ?? []) }
        return all
    }

    private func unwatch(_ user: UserID, by key: SessionKey) {
        guard watching[key]?.remove(user) != nil else { return }
        if watching[key]!.isEmpty { watching[key] = nil }
        watchers[user]?.remove(key)
        if watchers[user]?.isEmpty == true { watchers[user] = nil }
    }

    /// Asks the homes of `users` for their presence now, for session `key`.
    private func ask(_ users: [UserID], for key: SessionKey) {
        var byHome: [Int: [UserID]] = [:]
        for u in users { byHome[services.place(user: u), default: []].append(u) }
        for (place, users) in byHome {
            if place == services.index { asked(users, for: key, from: place) } else { services.links.post(.mail(services.index, [.presenceAsked(users: users, session: key)]), to: place) }
        }
    }

    /// Another home asks for its session `key`: the presence of users homed
    /// here, now (session 0: the home at `place` asks who is online, as `swapOnline`).
    /// In a cluster the asker may name this home before it serves them (the
    /// shard is being taken over, or no node holds it yet): those wait here
    /// (`askAgain`), for no answer is better than a wrong one.
    func asked(_ users: [UserID], for key: SessionKey, from place: Int) {
        if key == 0 { return tellOnline(to: place) }
        let served = users.filter(serves)
        if !served.isEmpty { services.port(for: key)?.presence(served.map(presenceNow)) }
        if served.count < users.count { unanswered.append((users.filter { !serves($0) }, key, services.loop.nowMillis)) }
    }

    /// What others see of a user homed here now: while a user taken over is in
    /// their grace, what their last home told (not yet offline without a last-seen time).
    private func presenceNow(_ user: UserID) -> GHPresence {
        let now = book.presence(of: user)
        if now.isOffline, takenOver[user] != nil, let told = book.told(user) { return GHPresence(told) }
        return GHPresence(now)
    }

    /// Each tick: questions that waited are answered for the users served here
    /// now, sent on for those another node is named for, and dropped after `questionWaitMs`.
    private func askAgain(now: UInt64) {
        let waiting = unanswered
        unanswered = []
        for q in waiting {
            var served: [UserID] = [], elsewhere: [Int: [UserID]] = [:], still: [UserID] = []
            for user in q.users {
                if serves(user) {
                    served.append(user)
                } else if let place = services.servingPlace(user: user), place != services.index {
                    elsewhere[place, default: []].append(user)
                } else {
                    still.append(user)
                }
            }
            if !served.isEmpty { services.port(for: q.key)?.presence(served.map(presenceNow)) }
            for (place, users) in elsewhere { services.links.post(.mail(services.index, [.presenceAsked(users: users, session: q.key)]), to: place) }
            if !still.isEmpty, now < q.since + Self.questionWaitMs { unanswered.append((still, q.key, q.since)) }
        }
    }

    /// Each tick: users taken over whose grace passed show as their sessions here say.
    private func settleTakenOver(now: UInt64) {
        leftWithNode = leftWithNode.filter { now < $0.value.until }
        for (user, until) in takenOver where now >= until {
            takenOver[user] = nil
            settle(user)
        }
    }
}

// MARK: Sessions

extension Presences {
    /// A session joined this home's interest index (admitted here, or served
    /// for its user's guilds or conversations): it hears who is not offline
    /// among the users it hears from here (never its own user), and at its user's home its user counts it.
    func opened(_ s: HomeSession) {
        var first: [GHPresence] = []
        if isHomeOf(s.user) {
            book.opened(s.user, session: s.key)
            settle(s.user)
        }
        var seen: Set<UserID> = [s.user]
        for server in directory.serverIDs(of: s.user) where directory.isSmall(server) {
            for other in registry.onlineMembers(of: server).values where seen.insert(other.user).inserted {
                if let p = shown[other.user] { first.append(p) }
            }
        }
        for peer in userHome.directs.peers(of: s.user) where seen.insert(peer).inserted {
            if let p = shown[peer] { first.append(p) }
        }
        if !first.isEmpty { s.port.presence(first) }
    }

    /// A session left the interest index (it ended).
    /// `reconnecting`: its gateway closed it DRAINING (that node drains, or the user's home moved),
    /// and its client is logging in again elsewhere: if it was the user's last session, others
    /// see the user as told until `reloginGraceMs` passes (as for a user taken over), so a drain
    /// does not flash its users offline and back; offline then, if no session came back.
    func closed(_ s: HomeSession, reconnecting: Bool = false) {
        for user in watching.removeValue(forKey: s.key) ?? [] {
            watchers[user]?.remove(s.key)
            if watchers[user]?.isEmpty == true { watchers[user] = nil }
        }
        guard isHomeOf(s.user) else { return }
        book.closed(s.user, session: s.key)
        if reconnecting, book.presence(of: s.user).isOffline, book.told(s.user).map({ !$0.isOffline }) == true {
            takenOver[s.user] = services.loop.nowMillis + Self.reloginGraceMs
            return
        }
        settle(s.user)
    }

    /// The homes at `places` (of a node that joined) hear who of the users
    /// homed here is not offline, and are asked the same of theirs.
    func swapOnline(with places: [Int]) {
        for place in places {
            services.links.post(.mail(services.index, [.presenceAsked(users: [], session: 0)]), to: place)
            tellOnline(to: place)
        }
    }

    /// The home at `place` hears who of the users homed here is not offline.
    func tellOnline(to place: Int) {
        let online = book.shownOnline.map(GHPresence.init)
        if !online.isEmpty { services.links.post(.mail(services.index, [.presence(online)]), to: place) }
    }

    /// Sessions of `users` ended without their home's word (their gateway's
    /// node left the cluster, perhaps with their home): those without a
    /// session anywhere now (`isGone`) are offline to the sessions here, as
    /// of now, whether or not their home lives to say so.
    func mayHaveLeft(_ users: Set<UserID>, isGone: (UserID) -> Bool) {
        let now = now(), until = services.loop.nowMillis + Self.questionWaitMs
        let left = users.filter { shown[$0] != nil && isGone($0) }.map { user in
            GHPresence.with { $0.userID = user; $0.status = .presenceOffline; $0.lastSeen = now }
        }
        for p in left { leftWithNode[p.userID] = (now, until) }
        if !left.isEmpty { heard(left) }
    }

    /// A user joined a small server here: its online members and the user's sessions hear each other.
    func memberJoined(_ user: UserID, server: ServerID) {
        guard directory.isSmall(server) else { return }
        let mine = Array(registry.sessions(of: user).values)
        let others = registry.onlineMembers(of: server).values.filter { $0.user != user }
        if let p = shown[user] { for s in others { s.port.presence([p]) } }
        var first: [GHPresence] = []
        var seen: Set<UserID> = [user]
        for s in others where seen.insert(s.user).inserted { if let p = shown[s.user] { first.append(p) } }
        if !first.isEmpty { for s in mine { s.port.presence(first) } }
    }

    /// What others see of `user` now, if it changed: told to every home at
    /// the end of the turn, at most once per `presence-frame-interval-ms` per
    /// user (a user flipping faster costs the homes and the sessions that hear
    /// them one change per interval, the latest). Going offline is told at
    /// once (a user who leaves or hides is never shown a moment longer) and
    /// stores the last-seen time.
    private func settle(_ user: UserID) {
        let now = services.loop.nowMillis
        if let at = toldAt[user], now < at + UInt64(settings.presenceFrameIntervalMs), !book.presence(of: user).isOffline {
            held.insert(user)
            return
        }
        tell(user, now: now)
    }

    /// Each tick of the home's timer: held changes whose interval has passed are told.
    func tellHeld(now: UInt64) {
        if !unanswered.isEmpty { askAgain(now: now) }
        if !takenOver.isEmpty || !leftWithNode.isEmpty { settleTakenOver(now: now) }
        if !lastSeenUnsaved.isEmpty {
            let again = lastSeenUnsaved
            lastSeenUnsaved = []
            for user in again { saveLastSeen(user) }
        }
        guard !held.isEmpty else { return }
        let interval = UInt64(settings.presenceFrameIntervalMs)
        for user in held where now >= (toldAt[user] ?? 0) + interval {
            held.remove(user)
            tell(user, now: now)
        }
    }

    private func tell(_ user: UserID, now: UInt64) {
        guard let p = book.settle(user, now: self.now()) else { return }
        toldAt[user] = p.isOffline ? nil : now
        if p.isOffline { saveLastSeen(user) }
        changes.append(GHPresence(p))
    }

    /// Stores the user's choice and last-seen time as they are now; tried again next tick when the commit fails.
    private func saveLastSeen(_ user: UserID) {
        commit([.presence(user, book.choice(of: user), lastSeen: book.lastSeen[user] ?? 0)], from: nil) { [self] error in
            if error != nil { lastSeenUnsaved.insert(user) }
        }
    }
}

// MARK: Telling every home

extension Presences {
    /// The turn ends: this turn's changes go to every home, this one included.
    func tellChanges() {
        guard !changes.isEmpty else { return }
        let list = changes
        changes.removeAll()
        for place in services.gateway.routes.everyPlace where place != services.index {
            services.links.post(.mail(services.index, [.presence(list)]), to: place)
        }
        heard(list)
    }

    /// The sessions here that hear `user`'s presence, each once: those watching
    /// the user, the online members of the user's small servers here, and the
    /// peers of the user's conversations held here. A user's own sessions hear
    /// it only by watching themselves (the answer to SetPresence tells the one that chose).
    func hearers(of user: UserID) -> [HomeSession] {
        var found: [SessionKey: HomeSession] = [:]
        for key in watchers[user] ?? [] { if let s = registry.all[key] { found[key] = s } }
        for server in directory.serverIDs(of: user) where directory.isSmall(server) {
            for s in registry.onlineMembers(of: server).values where s.user != user { found[s.key] = s }
        }
        for peer in userHome.directs.peers(of: user) {
            reception.serve(peer)
            for s in registry.sessions(of: peer).values { found[s.key] = s }
        }
        return Array(found.values)
    }

    /// Users' homes told of changes: each session here that hears a user gets its new state.
    func heard(_ list: [GHPresence]) {
        var owed: [SessionKey: [GHPresence]] = [:]
        func owe(_ s: HomeSession, _ p: GHPresence) { owed[s.key, default: []].append(p) }
        for p in list {
            let user = p.userID
            if p.status == .presenceOffline { shown[user] = nil } else { shown[user] = p }
            for s in hearers(of: user) { owe(s, p) }
            memberLists.presenceChanged(p, owe: owe)
        }
        for (key, presences) in owed {
            // Each user once per session, the latest (the same user may be reached several ways).
            var latest: [UserID: GHPresence] = [:]
            for p in presences { latest[p.userID] = p }
            registry.all[key]?.port.presence(latest.count == presences.count ? presences : Array(latest.values))
        }
    }
}

extension GHPresence {
    init(_ p: ShownPresence) {
        self.init()
        userID = p.user
        status = GHPresenceStatus(rawValue: p.status.rawValue) ?? .presenceOffline
        customText = p.text
        lastSeen = p.lastSeen
    }
}
