// The home's side of its sessions (docs/architecture.md): what gateways tell the home
// about them (`GatewayHome`, by session key) and what the home decides about
// a session's life. Admitting a login: one session per user and device, the
// per-user session limit, the user's interest in its servers, auto-subscribe
// mode, then offline sync. Ending one: it leaves the interest index at once;
// its gateway closes it and confirms with its last acknowledged position.
// Also the coalesced unread notices owed at the end of each turn.
// Home loop only.

import GuildhallBuild
import GuildhallCore
import GuildhallStore
import GuildhallWire

/// A session the home ended, until its gateway confirms (or is taken for
/// gone: `Reception.endingConfirmMs`).
struct EndingSession {
    let user: UserID
    let device: DeviceID
    /// Loop time the home ended it.
    let since: UInt64
}

/// A login the gateway verified, for the home to admit.
struct Admission: Sendable {
    /// The gateway's session (its key names its loop).
    let key: UInt64
    let token: AccessToken
    let autoSubscribe: Bool
    /// The login's request id, answered by the home.
    let id: UInt64
    /// Why a resume became this login ("" for a plain login).
    let resumeFailure: String
    /// The channel messages such a resume could not replay (`LoginResult.missed`).
    let missed: MissedMessages
    let peer: String
    /// Its gateway's node's life (`ClusterView.life`; 0 unknown).
    var gatewayLife: UInt64 = 0
}

/// The home's own work its door hands commands to (Home.swift): a request to
/// its handler, a send to the send path, a replay from the store, the end of the home's turn.
struct HomeHands {
    let route: (RequestRule, _ id: UInt64, _ from: HomeSession) -> Void
    /// Returns the sends it did not handle: the session was paused (`Home.sendRun`).
    let send: (ArraySlice<PendingSend>, _ from: HomeSession) -> ArraySlice<PendingSend>
    let replay: (ChannelID, _ after: UInt64, _ before: UInt64, _ to: Int) -> Void
    let turnEnding: () -> Void
}

/// The home's reception: every gateway's `GatewayHome`, on the home's loop
/// directly, from other loops through `RemoteHome` and the home's inbox.
final class Reception: HomePart, GatewayHome {
    unowned let services: HomeServices
    /// The parts a session's life reaches: who it is shown to, its offline
    /// sync, its subscriptions and read positions, its publisher's pause.
    private unowned let presences: Presences
    private unowned let memberLists: MemberLists
    private unowned let profiles: Profiles
    private unowned let pushNotices: PushNotices
    private unowned let offlineDelivery: OfflineDelivery
    private unowned var subscriptions: Subscriptions!
    private unowned var userHome: UserHome!
    private unowned var reading: Reading!
    private unowned var publishers: PublisherPause!
    private unowned var webhooks: Webhooks!
    /// The home's own work the door hands commands to.
    private var hands: HomeHands!
    /// Sessions the home ended whose gateways have not yet confirmed.
    private var ending: [UInt64: EndingSession] = [:]
    /// Logins whose offline sync waits for such a confirmation.
    private var syncsWaiting: [HomeSession] = []
    /// Sessions owed coalesced unread notices, sent at the end of the turn.
    let owing = OwingList()
    /// Sessions of users homed elsewhere that this home does not serve yet.
    private var roster = SessionRoster()
    /// Sends that arrived while the home had paused their publisher, in order, by session.
    private var heldSends: [UInt64: [PendingSend]] = [:]
    /// In a cluster: the other nodes as last seen (`followNodes`).
    private var nodes = NodeWatch()

    init(services: HomeServices, presences: Presences, memberLists: MemberLists, profiles: Profiles, pushNotices: PushNotices,
         offlineDelivery: OfflineDelivery) {
        self.services = services
        self.presences = presences
        self.memberLists = memberLists
        self.profiles = profiles
        self.pushNotices = pushNotices
        self.offlineDelivery = offlineDelivery
    }

    /// The parts built after this one, and the home's own work (`HomeHands`).
    func use(_ subscriptions: Subscriptions, _ userHome: UserHome, _ reading: Reading, _ publishers: PublisherPause, _ webhooks: Webhooks,
             hands: HomeHands) {
        self.subscriptions = subscriptions
        self.userHome = userHome
        self.reading = reading
        self.publishers = publishers
        self.webhooks = webhooks
        self.hands = hands
    }

    // MARK: Requests

    func route(_ body: GHRequest.OneOf_Body, id: UInt64, session key: UInt64, part: Bool) {
        let rule = body.rule
        if part {
            answerPart(id, session: key, holding: rule.target) { s in self.hands.route(rule, id, s) }
            return
        }
        guard let s = serving(key) else { return unknown(key) }
        // In a cluster a gateway may send a request here a moment before this
        // node serves (or after it stopped serving) what it names: 503, never "not found".
        if !services.servesHere(rule.target, for: s.user) { return s.fail(id, Home.notServedHere) }
        hands.route(rule, id, s)
    }

    /// This home's part `id` of a gathered answer, by `answer` on the session's home side.
    private func answerPart(_ id: UInt64, session key: UInt64, holding target: RequestTarget, _ answer: (HomeSession) -> Void) {
        if registry.all[key] == nil, let listed = roster[key], let s = session(listed) {
            // A part for a user this home does not serve: answered for the
            // moment (it holds nothing of theirs), without serving them from now on.
            s.partAnswers[id] = false
            answer(s)
            roster[key]?.autoSubscribe = s.autoSubscribe
            return
        }
        guard let s = serving(key) else {
            // A part must come back even from a home that never knew the session, or the merge would wait.
            services.port(for: key)?.answerPart(id, GatherPart(result: .error(GHError(Failure.notFound("not found"))), fromHolder: false))
            return
        }
        s.partAnswers[id] = holds(target)
        answer(s)
    }

    /// Whether this home holds the one channel or conversation `target`
    /// names, when no gateway knew where it is (GatherPart).
    private func holds(_ target: RequestTarget) -> Bool {
        guard case .announcedChannel(let id) = target else { return false }
        return directory.channel(id) != nil || userHome.directs[id] != nil
    }

    func channelTails(_ channels: [ChannelID], of user: UserID, gather gid: UInt64, session key: UInt64) {
        var list = GHUnreadList()
        list.unreads = channels.compactMap { id in
            guard let c = directory.channel(id), directory.canView(user, c) else { return nil }
            var info = GHUnreadInfo()
            info.serverID = c.serverID
            info.channelID = c.id
            info.lastSeq = c.lastSeq
            return info
        }
        services.port(for: key)?.answerPart(gid, GatherPart(result: .unreads(list), fromHolder: false))
    }

    func checkSubscriptions(_ r: GHSubscribe, gather gid: UInt64, session key: UInt64) {
        answerPart(gid, session: key, holding: .everyHome) { s in self.subscriptions.subscribe(r, id: gid, from: s, checkOnly: true) }
    }

    func grantSubscriptions(_ r: GHSubscribe, gather gid: UInt64, session key: UInt64) {
        guard let s = serving(key) else {
            services.port(for: key)?.answerPart(gid, GatherPart(result: .error(GHError(Failure.notFound("not found"))), fromHolder: false))
            return
        }
        subscriptions.grant(r, gather: gid, for: s)
    }

    func releaseSubscriptions(user: UserID, kind: SubscriptionKind, _ targets: [SubscriptionTarget]) {
        subscriptions.allowance.release(user, kind, targets)
    }

    func sendMessages(_ sends: [PendingSend], session key: UInt64) {
        guard let channel = sends.first?.request.channelID else { return }
        guard let s = serving(key) else { return unknown(key) }
        if !services.servesHere(.channel(channel), for: s.user) {
            for p in sends { s.fail(p.id, Home.notServedHere) }
            return
        }
        // Sends read while the home pauses their publisher (for its fan-out
        // or for the store) wait here, in order, not in the fan-out or the
        // store queue: a gateway on another loop hears of a pause a turn
        // late, with thousands on their way, and a run read on this loop may
        // be paused part way (`Home.sendRun`).
        let rest = s.readPauses.isEmpty ? hands.send(sends[...], s) : sends[...]
        if !rest.isEmpty { heldSends.change(key, default: []) { $0 += rest } }
    }

    /// The publisher is read again: the sends that waited go on, in order,
    /// until it is paused again. Before its gateway reads it again
    /// (`HomeSession.resumeReading`), so they keep their place before what it sends next.
    func releaseHeldSends(_ s: HomeSession) {
        guard s.readPauses.isEmpty, let held = heldSends.removeValue(forKey: s.key) else { return }
        let rest = hands.send(held[...], s)
        if !rest.isEmpty { heldSends[s.key] = Array(rest) }
    }

    /// The session `key`, served from now on if it was only listed.
    /// A request from a session this home never heard of: in a cluster, its
    /// node restarted since the session logged in (the announcement was lost
    /// with it). The session logs in again, and is announced to every node.
    private func unknown(_ key: UInt64) {
        guard !settings.cluster.isEmpty, Place.isRemote(services.links.place(ofSession: key)) else { return }
        services.port(for: key)?.end(.draining, "a node of the cluster restarted and does not know this session; reconnect")
    }

    private func serving(_ key: UInt64) -> HomeSession? {
        if let s = registry.all[key] { return s }
        guard let listed = roster[key] else { return nil }
        serve(listed.opened.user)
        return registry.all[key]
    }

    /// The home needs `user` (a request of theirs, or they joined one of its guilds): it serves all their sessions.
    func serve(_ user: UserID) {
        for e in roster.take(user) {
            guard let s = session(e) else { continue }
            s.detachedSince = e.detachedSince
            s.isBehind = e.isBehind
            open(s)
            if e.autoSubscribe { subscriptions.enableAutoMode(s) }
        }
    }

    /// A login this home will not take: refused as by a home that does not
    /// serve the user, so the client tries again (on another node) at once.
    func refuse(_ a: Admission) {
        refuse(a.id, session: a.key)
        services.port(for: a.key)?.end(.draining, "the node that served your account gave it up; reconnect")
    }

    private func refuse(_ id: UInt64, session key: UInt64) {
        var frame = GHFrame()
        frame.response.id = id
        frame.response.result = .error(GHError(Home.notServedHere))
        services.port(for: key)?.respond(encoded: FrameEncoding.payload(frame))
    }

    /// The home closed (its node drained, or is stopping): what other nodes'
    /// gateways send before they see the node leave is refused at once, as by
    /// a home that serves none of it (a login, a request, a send: 503, retry; a
    /// gathered part: nothing held here), instead of left to time out.
    func refuseAll(_ commands: [HomeCommand]) {
        for c in commands {
            switch c {
            case .admit(let a): refuse(a)
            case .route(_, let id, let key, true):
                services.port(for: key)?.answerPart(id, GatherPart(result: .error(GHError(Failure.notFound("not found"))), fromHolder: false))
            case .route(_, let id, let key, false), .send(_, let id, let key): refuse(id, session: key)
            default: break
            }
        }
    }

    /// A home side for a listed session (nil once its gateway side is gone).
    private func session(_ e: SessionRoster.Entry) -> HomeSession? {
        let o = e.opened
        guard let port = services.port(for: o.key) else { return nil }
        let s = HomeSession(key: o.key, port: port, user: o.user, device: o.device, sessionID: o.sessionID, owing: owing, metrics: services.metrics)
        s.autoSubscribe = e.autoSubscribe
        s.gatewayLife = o.gatewayLife
        return s
    }

    // MARK: A session's life
    /// Logs a connection in as a new session of the token's user and device,
    /// then runs offline sync.
    func admit(_ a: Admission) {
        guard let port = services.port(for: a.key) else { return }
        let token = a.token
        // In a cluster the user's shard left this node after the gateway sent the login here.
        guard services.servesHere(.user, for: token.user) else { return refuse(a) }
        let existing = registry.sessions(of: token.user)
        if let replaced = existing.values.first(where: { $0.device == token.device }) {
            end(replaced, .replaced, "replaced by a new login on device \(token.device)")
        }
        let others = registry.sessions(of: token.user)
        if others.count >= settings.maxSessionsPerUser {
            // A dropped session waiting for its resume yields to a live login.
            if let oldest = others.values.compactMap({ s in s.detachedSince.map { (s, $0) } }).min(by: { $0.1 < $1.1 })?.0 {
                end(oldest, nil, "made room for a new login")
            } else {
                let failure = Failure(.limitReached, "\(token.user) already has \(others.count) sessions online; the limit is \(settings.maxSessionsPerUser)")
                var frame = GHFrame()
                frame.response.id = a.id
                frame.response.result = .error(GHError(failure))
                port.respond(encoded: FrameEncoding.payload(frame))
                port.end(.authFailed, failure.message)
                return
            }
        }
        let session = HomeSession(key: a.key, port: port, user: token.user, device: token.device,
                                  sessionID: SessionID.make(key: a.key), owing: owing,
                                  metrics: services.metrics)
        session.gatewayLife = a.gatewayLife
        // Live events wait until sync is done; items up to the horizon come from the inbox.
        session.sync = OfflineSync(horizon: runner.inboxFanned)
        open(session)
        var result = GHLoginResult(user: token.user, device: token.device, sessionID: session.sessionID, settings: settings, now: now())
        result.resumeFailure = a.resumeFailure
        result.missed = a.missed.gaps
        result.autoUncovered = UInt32(clamping: subscriptions.ladders[a.token.user]?.ladder.uncovered ?? 0)
        session.respond(a.id, .login(result))
        // After the answer: admitting lets the gateway read the requests that
        // followed the login, and on this loop it may answer them at once.
        port.admitted(user: token.user, device: token.device, sessionID: session.sessionID)
        if a.autoSubscribe { subscriptions.enableAutoMode(session) }
        log.info("login", ["user": token.user, "device": token.device, "peer": a.peer, "session": session.sessionID])
        // The device's cursor is read once the session this login replaced has
        // given its last acknowledgements (on another loop they may still be on their way).
        if ending.values.contains(where: { $0.user == token.user && $0.device == token.device }) {
            syncsWaiting.append(session)
        } else {
            offlineDelivery.beginSync(session)
        }
    }

    /// Another home admitted a session of a user homed there (GatewayHome):
    /// this home delivers to it and answers it too.
    func sessionOpened(_ o: OpenedSession) {
        guard registry.all[o.key] == nil, roster[o.key] == nil else { return }
        roster.list(o)
        // A member of one of this home's guilds gets its fan-out from now on,
        // and a party to a conversation held here the presence of its peer.
        if !directory.serverIDs(of: o.user).isEmpty || userHome.directs.hasConversations(o.user) { serve(o.user) }
    }

    /// The session joins the interest index.
    private func open(_ s: HomeSession) {
        registry.add(s)
        registry.loggedIn(s, servers: directory.serverIDs(of: s.user))
        book.open(s.key, user: s.user)
        presences.opened(s)
        profiles.opened(s)
        pushNotices.opened(s)
    }

    /// Ends a session the home decided to end: it leaves the interest index
    /// at once, and its gateway closes it and confirms (`sessionEnded`).
    func end(_ s: HomeSession, _ reason: GHCloseReason?, _ message: String) {
        forget(s)
        ending[s.key] = EndingSession(user: s.user, device: s.device, since: services.loop.nowMillis)
        s.port.end(reason, message)
    }

    /// How long an ended session's gateway has to confirm. One that does not
    /// (its node died with it) is taken as ended with nothing more
    /// acknowledged: a login of the same device waiting for it would otherwise never sync.
    static let endingConfirmMs: UInt64 = 3_000

    /// Endings unconfirmed for `endingConfirmMs` are taken as confirmed.
    func expireEndings(now: UInt64) {
        for (key, e) in ending where now >= e.since + Self.endingConfirmMs {
            log.warn("an ended session's gateway did not confirm; taken as gone", ["user": e.user, "device": e.device])
            sessionEnded(key, ackedOrd: 0, reconnecting: false)
        }
    }

    /// A session ended (GatewayHome). One the home ended already is
    /// confirmed: its last acknowledged position is kept, and logins of its
    /// device waiting for that sync now.
    func sessionEnded(_ key: UInt64, ackedOrd: UInt64, reconnecting: Bool) {
        roster.remove(key)
        if let s = registry.all[key] {
            _ = s.acknowledged(upTo: ackedOrd)
            forget(s, reconnecting: reconnecting)
            return
        }
        guard let e = ending.removeValue(forKey: key) else { return }
        let waiting = syncsWaiting.filter { $0.user == e.user && $0.device == e.device }
        let write: [StoreWrite] = ackedOrd > 0 ? [.syncCursor(e.user, e.device, ackedOrd)] : []
        guard !waiting.isEmpty || !write.isEmpty else { return }
        syncsWaiting.removeAll { $0.user == e.user && $0.device == e.device }
        commit(write, from: nil) { _ in }
        for s in waiting where s.isLoggedIn {
            if self.ending.values.contains(where: { $0.user == s.user && $0.device == s.device }) {
                self.syncsWaiting.append(s)
            } else {
                self.offlineDelivery.beginSync(s)
            }
        }
    }

    /// The session leaves the interest index and its subscriptions, its
    /// device's sync cursor is kept, and auto mode ends with the user's last auto session.
    private func forget(_ s: HomeSession, reconnecting: Bool = false) {
        guard s.isLoggedIn else { return }
        s.ended()
        registry.remove(s, servers: directory.serverIDs(of: s.user))
        book.close(s.key)
        presences.closed(s, reconnecting: reconnecting)
        memberLists.closed(s.key)
        offlineDelivery.saveCursor(of: s)
        subscriptions.autoStarting.removeValue(forKey: s.key)
        heldSends.removeValue(forKey: s.key)
        if s.autoSubscribe { subscriptions.autoModeEnded(s.user) }
    }

    /// In a cluster, a node that left the cluster (it died, or drained and
    /// stopped) took its gateways' sessions with it, and never says each one
    /// ended: they end here now, so nothing is fanned out to them, and their
    /// users are offline unless a session elsewhere remains (Presences.swift).
    /// With a node that joined (or that this one sees for the first time,
    /// as when this node just started, empty), or started again, the homes swap who of
    /// their users is online. Which sessions end: NodeWatch.swift. Each tick of the home's
    /// timer; the cost is a set comparison until a node comes or goes.
    func followNodes() {
        guard !settings.cluster.isEmpty, let gateway = services.gateway else { return }
        let view = gateway.limits.node.cluster.snapshot
        let change = nodes.look(live: Set(view.loops.keys), lives: view.lives, me: settings.nodeID, now: services.loop.nowMillis,
                                grace: UInt64(settings.leaseTTLMs))
        for node in change.joined { presences.swapOnline(with: (0..<(view.loops[node] ?? 0)).map { Place.remote(node: node, loop: $0) }) }
        guard change.endsAny else { return }
        var users: Set<UserID> = []
        for (key, s) in registry.all where change.ends(key: key, life: s.gatewayLife) {
            users.insert(s.user)
            sessionEnded(key, ackedOrd: 0, reconnecting: false)
        }
        for (key, user) in roster.sessions(where: change.ends) {
            users.insert(user)
            roster.remove(key)
        }
        presences.mayHaveLeft(users) { self.registry.sessions(of: $0).isEmpty && !self.roster.lists($0) }
        let message = !change.left.isEmpty ? "a node left the cluster; its sessions ended here"
            : !change.restarted.isEmpty ? "a node started again; its earlier sessions ended here"
            : users.isEmpty ? nil : "a node that left did not come back; the sessions of its later life ended here"
        guard let message else { return }
        log.warn(message, ["nodes": change.left.union(change.restarted).union(change.overdue).sorted().map(String.init).joined(separator: ","),
                           "users": users.count])
    }

    func acknowledged(session key: UInt64, ackedOrd: UInt64, packageAcked: Bool) {
        guard let s = registry.all[key] else { return }
        offlineDelivery.acknowledged(s, ackedOrd: ackedOrd, packageAcked: packageAcked)
    }

    func received(session key: UInt64, _ upTo: [ChannelID: UInt64]) {
        guard let user = registry.all[key]?.user ?? roster[key]?.opened.user else { return }
        for (channel, seq) in upTo {
            // Only seqs that exist, in channels the user may view.
            guard let c = directory.channel(channel), directory.canView(user, c) else { continue }
            let upTo = min(seq, c.lastSeq)
            if positions.received(user, channel, upTo: upTo) { reading.owe(received: .upTo(upTo, in: channel, read: false), of: user, except: key) }
        }
    }

    func sessionDetached(_ key: UInt64, since: UInt64) {
        roster[key]?.detachedSince = since
        guard let s = registry.all[key] else { return }
        s.detachedSince = since
    }

    func sessionResumed(_ key: UInt64) {
        roster[key]?.detachedSince = nil
        roster[key]?.isBehind = false
        guard let s = registry.all[key] else { return }
        s.detachedSince = nil
        s.isBehind = false
        if !s.pendingUnread.isEmpty || !s.pendingReceived.isEmpty { s.markOwing() }
    }

    func sessionBehind(_ key: UInt64, _ behind: Bool) {
        roster[key]?.isBehind = behind
        guard let s = registry.all[key] else { return }
        s.isBehind = behind
        if !behind && (!s.pendingUnread.isEmpty || !s.pendingReceived.isEmpty) { s.markOwing() }
    }

    // MARK: Turns

    func turnEnding() {
        hands.turnEnding()
        sendOwedNotices()
    }

    /// This loop's gateway flushed: paused publishers are read again if
    /// what they fanned out has drained (the kernel has taken this turn's
    /// bytes or they are counted now), and what this turn has for the other loops goes to them.
    func turnEnded(_ gateway: Gateway) {
        publishers.resumeIfDrained()
        // Sends read from resumed publishers go to the writer now: this turn's
        // commits are done, and nothing else need wake this loop (their
        // recipients may all be on other loops).
        runner.submitTurnJobs()
        runner.writesOut()
        services.links.postTurn()
    }

    /// Coalesced unread notices; a session behind on its writes gets them once it catches up.
    private func sendOwedNotices() {
        let sessions = owing.sessions
        owing.sessions.removeAll(keepingCapacity: true)
        for s in sessions {
            s.isOwing = false
            guard s.isLoggedIn else { continue }
            if s.isBehind {
                // Unread notices wait, collapsed to the latest per channel (typing is shed at the gateway).
                services.metrics.eventsShed.increment(by: Int64(s.pendingUnread.count))
            } else {
                reading.emitUnread(s)
                reading.emitReceived(s)
            }
        }
    }

    func webhookPost(_ d: WebhookDelivery, fromGateway place: Int) { webhooks.post(d, door: place) }

    func replay(_ channel: ChannelID, after: UInt64, before: UInt64, toGateway place: Int) {
        hands.replay(channel, after, before, place)
    }

    /// Carries out what a gateway on another loop told the home.
    func carryOut(_ commands: [HomeCommand], from gatewayIndex: Int) {
        services.loop.assertOnLoop()
        // Consecutive sends of one session to one channel go on as the run they were read as (SendRun.swift).
        var run: [PendingSend] = [], runSession: UInt64 = 0
        func handOnRun() {
            guard !run.isEmpty else { return }
            sendMessages(run, session: runSession)
            run.removeAll(keepingCapacity: true)
        }
        for c in commands {
            if case .send(let r, let id, let key) = c {
                if key != runSession || run.first?.request.channelID != r.channelID || run.count >= SendRun.maxSends { handOnRun() }
                runSession = key
                run.append(PendingSend(request: r, id: id))
                continue
            }
            handOnRun()
            switch c {
            case .admit(let a): admit(a)
            case .opened(let o): sessionOpened(o)
            case .route(let body, let id, let key, let part): route(body, id: id, session: key, part: part)
            case .send: break
            case .grant(.subscribe(let r), let gid, let key): grantSubscriptions(r, gather: gid, session: key)
            case .check(.subscribe(let r), let gid, let key): checkSubscriptions(r, gather: gid, session: key)
            case .grant, .check: break
            case .tails(let channels, let user, let gid, let key): channelTails(channels, of: user, gather: gid, session: key)
            case .release(let user, let kind, let targets):
                if let kind = SubscriptionKind(rawValue: kind) { releaseSubscriptions(user: user, kind: kind, targets) }
            case .acknowledged(let key, let ord, let packageAcked): acknowledged(session: key, ackedOrd: ord, packageAcked: packageAcked)
            case .ended(let key, let ackedOrd, let reconnecting): sessionEnded(key, ackedOrd: ackedOrd, reconnecting: reconnecting)
            case .received(let key, let upTo): received(session: key, upTo)
            case .detached(let key, let since): sessionDetached(key, since: since)
            case .resumed(let key): sessionResumed(key)
            case .behind(let key, let behind): sessionBehind(key, behind)
            case .replay(let channel, let after, let before): hands.replay(channel, after, before, gatewayIndex)
            case .webhookPost(let d): webhooks.post(d, door: gatewayIndex)
            case .outbound(let queued, let applied): services.links.reported(queued: queued, applied: applied, from: gatewayIndex)
            }
        }
        handOnRun()
    }
}

extension GHLoginResult {
    /// The answer to a login or a resume: who, the server's build, and the limits the session is held to.
    init(user: UserID, device: DeviceID, sessionID: String, settings: Settings, now: UInt64) {
        self.init()
        userID = user
        deviceID = device
        self.sessionID = sessionID
        heartbeatIntervalMs = UInt32(settings.heartbeatIntervalMs)
        serverTime = now
        serverVersion = BuildInfo.version
        serverCommit = BuildInfo.commit
        limits = GHClientLimits(settings)
    }
}

extension GHClientLimits {
    init(_ s: Settings) {
        self.init()
        maxFrameBytes = UInt32(clamping: s.maxFrameBytes)
        maxBodyBytes = UInt32(clamping: s.maxBodyBytes)
        rateSession = UInt32(clamping: s.rateSession)
        rateQueries = UInt32(clamping: s.rateQueries)
        rateChanges = UInt32(clamping: s.rateChanges)
        rateMessages = UInt32(clamping: s.rateMessages)
        rateTyping = UInt32(clamping: s.rateTyping)
        syncPackageSize = UInt32(clamping: s.syncPackageSize)
        maxMentions = UInt32(clamping: s.maxMentions)
    }
}
