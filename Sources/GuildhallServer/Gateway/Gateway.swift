// A gateway (docs/architecture.md): the loop's side of its sessions. It accepts
// connections, reads and decodes frames, authenticates, keeps each session's
// liveness and backpressure, flushes once per loop turn, drops and resumes
// sessions, and closes them with a reason. What it cannot decide itself it
// asks of the homes (`GatewayHome`, chosen by `HomeRoutes`): its own loop's
// by calls, the other loops' by messages. It touches its sessions, their
// connections and the loop; nothing of the directory or the store. Loop thread only.
//
// Files: this one (state, flushing, liveness, caps, shutdown), Connections.swift
// (accept to close), Resumption.swift (drop and resume). Its parts, each owning
// its state and given the sessions it acts on: GatewayInterest (its half of
// the interest, with the gaps a cluster fills: ChannelGapFill.swift),
// CoalescedFrames (typing and presence frames), GatewayRequests (what it asks
// of homes for its sessions: carried subscriptions, forwarded sends, idleness).

import GuildhallCore
import GuildhallLoop
import GuildhallWire

/// What a gateway tells a home, by session key. The home on the gateway's
/// own loop is called directly; one on another loop through a `RemoteHome`,
/// which queues the calls as messages for that loop. `HomeRoutes` says which
/// home hears what.
protocol GatewayHome: AnyObject {
    /// A connection proved who it is: log it in as a new session (and run offline sync). Its user's home only.
    func admit(_ a: Admission)
    /// Its user's home admitted the session: the other homes deliver to it and answer it too.
    func sessionOpened(_ o: OpenedSession)
    /// A logged-in session's request that passed the request table's checks;
    /// with `part`, every home answers what it holds and the gateway merges the parts.
    func route(_ body: GHRequest.OneOf_Body, id: UInt64, session key: UInt64, part: Bool)
    /// A guild home's part of which of a subscribe's targets could be taken
    /// (exist, may be seen), without taking them (SubscriptionGrants.swift).
    func checkSubscriptions(_ r: GHSubscribe, gather gid: UInt64, session key: UInt64)
    /// The user's home: which of a subscribe's targets fit the user's limits
    /// (SubscriptionGrants.swift), answered as the part `gid` of a gathered request.
    func grantSubscriptions(_ r: GHSubscribe, gather gid: UInt64, session key: UInt64)
    /// The user's home: targets granted whose subscribe failed no longer take a place.
    func releaseSubscriptions(user: UserID, kind: SubscriptionKind, _ targets: [SubscriptionTarget])
    /// The newest seq of each of these channels this home holds and `user`
    /// may read, answered as the part `gid` (MissedChannels.swift).
    func channelTails(_ channels: [ChannelID], of user: UserID, gather gid: UInt64, session key: UInt64)
    /// Sends of one session to one channel, in the order read (SendRun.swift).
    func sendMessages(_ sends: [PendingSend], session key: UInt64)
    /// The client acknowledged events: its acknowledged inbox position, and whether that finished the offline package in flight.
    func acknowledged(session key: UInt64, ackedOrd: UInt64, packageAcked: Bool)
    /// The session's device received these channels' messages up to these seqs.
    func received(session key: UInt64, _ upTo: [ChannelID: UInt64])
    /// The session ended: forget it everywhere (interest, subscriptions, auto mode) and keep its device's cursor
    /// (`ackedOrd`: the inbox position its client acknowledged last). `reconnecting`: it was closed
    /// DRAINING, and its client logs in again elsewhere at once (its user's presence waits a grace).
    func sessionEnded(_ key: UInt64, ackedOrd: UInt64, reconnecting: Bool)
    /// The session lost its connection at loop time `since` and may resume.
    func sessionDetached(_ key: UInt64, since: UInt64)
    /// A resume took the session over on a new connection.
    func sessionResumed(_ key: UInt64)
    /// The session fell behind on its writes (or caught up): coalesced notices wait for it, typing is shed.
    func sessionBehind(_ key: UInt64, _ behind: Bool)
    /// The gateway (at place `toGateway`) missed messages of `channel` after
    /// seq `after` and before `before`: send them again, then say so.
    func replay(_ channel: ChannelID, after: UInt64, before: UInt64, toGateway: Int)
    /// A post to one of this home's channels' webhooks; the answer goes to the gateway at `fromGateway`.
    func webhookPost(_ d: WebhookDelivery, fromGateway: Int)
    /// The gateway's loop turn ends, before its sessions are flushed.
    func turnEnding()
    /// The gateway flushed its sessions.
    func turnEnded(_ gateway: Gateway)
}

final class Gateway {
    var settings: Settings
    let log: ServerLog
    let loop: EventLoop
    /// Verifies login tokens.
    let secret: [UInt8]
    let clock: @Sendable () -> UInt64
    /// The way to the homes: which hears each request and report.
    let routes: HomeRoutes
    /// Which of its sessions hold each channel, with their users' positions (the gateway's half of the interest).
    let interest = GatewayInterest()
    /// Requests per session, failed logins, connections (RequestLimits.swift).
    let limits: GatewayLimits
    /// The loop's home's subscriptions by type, for the metrics the sweep leaves (set by the loop).
    var homeFigures: (() -> [Int: Int])?
    /// Sessions some home asked not to read, with the homes that asked (kept here, not in every session: pauses are rare).
    var pausingHomes: [UInt64: PausingHomes] = [:]
    /// This gateway's sessions, by key; a key's low byte is the gateway's index (`index`).
    private(set) var sessions: [UInt64: Session] = [:]
    /// The same, lent, for the look-up per recipient of a home's events (`sessions` keeps them alive).
    private(set) var lent = SessionTable<Unmanaged<Session>>()
    /// Which loop this gateway is (0 for the home's own).
    let index: Int
    let flushList = FlushList()
    /// Typing and presence frames that wait for their intervals (CoalescedFrames.swift).
    let frames: CoalescedFrames
    /// Retries the typing and presence frames that had to wait for their intervals.
    private var typingTimer: LoopTimer!
    /// How to hand a connection to each gateway by index (a resume that arrived on the wrong loop).
    var peers: [@Sendable (HandOff) -> Void] = []
    /// Bytes of events each home on another loop sent here so far (`carryOut`), for its publisher pauses.
    var appliedBytes: [Int: Int] = [:]
    /// Requests carried to guilds' new homes and sends forwarded to other nodes (SubscriptionCarry.swift, ForwardedSends.swift).
    let requests: GatewayRequests
    /// Shared events rendered for this loop's JSON WebSocket sessions.
    let jsonEvents = JSONEvents()
    /// Logins whose JWT is being verified off the loop (set by NodeLoop).
    var tokenChecks: TokenChecks?
    /// This loop's sessions' requests timed by kind (RequestDurations.swift).
    var requestDurations = RequestDurations()
    /// The bytes publishers wait for, the total cap, the peak (OutboundBounds.swift).
    private(set) lazy var outboundBounds = OutboundBounds(gateway: self)
    private var flushCheck: LoopCheck!
    private var sweepTimer: LoopTimer!
    /// Acknowledgements' answers waiting for their sessions' next writes.
    private(set) var heldAnswers: HeldAnswers!
    private var listener: TCPListener?
    /// Where browsers come in, with the connections still in their handshake (WebSocketDoor.swift).
    private(set) var webSocketDoor: WebSocketDoor!
    var sessionCounter: UInt64 = 0
    /// No more connections or requests: the server is shutting down.
    private(set) var shuttingDown = false
    /// Connections closing gracefully, until libuv releases them.
    private var lingering: [ObjectIdentifier: TCPConnection] = [:]
    private var lingerTimer: LoopTimer?
    private var closedAll = false

    init(index: Int, loop: EventLoop, settings: Settings, log: ServerLog, secret: [UInt8], clock: @escaping @Sendable () -> UInt64,
         routes: HomeRoutes, limits: GatewayLimits) {
        self.limits = limits
        self.index = index
        self.loop = loop
        self.settings = settings
        self.log = log
        self.secret = secret
        self.clock = clock
        self.routes = routes
        frames = CoalescedFrames(shed: limits.node.metrics.eventsShed)
        requests = GatewayRequests(routes: routes, interest: interest, loop: loop, clock: clock, shards: settings.shards)
        flushCheck = LoopCheck(loop: loop) { [unowned self] in self.flushAll() }
        heldAnswers = HeldAnswers(loop: loop) { [unowned self] in self.flushAll() }
        sweepTimer = LoopTimer(loop: loop)
        // At least twice a second: deadlines (idle, write stall) are met within half a second of their time.
        let sweepEvery = UInt64(max(50, min(500, min(settings.loginDeadlineMs, settings.idleTimeoutMs) / 4)))
        // A timer's work is a turn of its own: libuv runs timers before it polls and the flush
        // check after the poll returns, so what a timer queued would wait for the next I/O or timer.
        sweepTimer.start(afterMillis: sweepEvery, repeatMillis: sweepEvery) { [unowned self] in
            self.sweep()
            self.flushAll()
        }
        typingTimer = LoopTimer(loop: loop)
        let typingEvery = UInt64(max(20, min(250, min(settings.typingFrameIntervalMs, settings.presenceFrameIntervalMs) / 4)))
        typingTimer.start(afterMillis: typingEvery, repeatMillis: typingEvery) { [unowned self] in
            self.frames.retry { self.sessions[$0] }
            self.flushAll()
        }
        webSocketDoor = WebSocketDoor(loop: loop, certificates: limits.node.certificates, trustedProxies: { [unowned self] in self.limits.proxies },
                                      settings: { [unowned self] in self.settings }, files: limits.node.files, metrics: limits.node.metrics, wallClock: clock,
                                      upgraded: { [unowned self] c, encoding, client in _ = self.accepted(c, webSocket: encoding, client: client) },
                                      closing: { [unowned self] c in self.linger(c) },
                                      deliverWebhook: { [unowned self] d in
                                          // To its channel's home; 404 for a channel no home announced, 503 while none serves it.
                                          guard let h = self.routes.alone ? 0 : self.routes.placeIfKnown(ofChannel: d.channelID) else {
                                              return self.routes.cluster.clustered ? 503 : 404
                                          }
                                          self.routes.home(h).webhookPost(d, fromGateway: self.index)
                                          return nil
                                      })
    }

    /// Starts accepting connections on `settings.listen` (on `port` instead
    /// of its port when given); `sharing`: beside other loops' listeners on
    /// the same address (SO_REUSEPORT).
    func listen(port override: Int? = nil, sharing: Bool) throws {
        guard let (host, port) = SocketAddress.split(settings.listen) else {
            throw SettingsError(description: "listen must be HOST:PORT, not \(settings.listen)")
        }
        listener = try TCPListener(loop: loop, host: host, port: override ?? port, reusePort: sharing) { [unowned self] in
            self.accepted($0)
        }
    }

    /// The port the listener bound.
    var port: Int { listener?.port ?? 0 }

    // MARK: Flushing and liveness

    /// Once per loop turn: this turn's commits, then one write per session with bytes queued.
    func flushAll() {
        loop.assertOnLoop()
        routes.turnEnding()
        let pacing = FramePacing(settings, now: loop.nowMillis)
        // The turn's last run goes out recipient by recipient, each written at
        // once (`flushRecipient`), rather than every recipient's bytes queued
        // first and all written after: at D the queueing took a quarter of a
        // turn, and every write waited for all of it (docs/performance.md).
        flushList.recipientPacing = pacing
        settleFanout()
        flushList.recipientPacing = nil
        if !flushList.answered.isEmpty {
            flushList.sessions += flushList.answered
            flushList.answered.removeAll(keepingCapacity: true)
        }
        let sessions = flushList.sessions
        flushList.sessions.removeAll(keepingCapacity: true)
        // Cutting a connection cancels its queued writes, thousands for a full
        // slow consumer; one cut per turn keeps that off other sessions' latency
        // (measured: 20 stalled subscribers cut in one turn added ~30 ms to the
        // healthy ones' p99.9; one per turn, within noise).
        var cuts = 0
        var cutLater: [Session] = []
        for s in sessions where s.isDirty {  // not those the run wrote already
            endTurn(of: s, pacing)
            if s.heldOverflow {
                close(s, .slowConsumer, "live events waiting for an unacknowledged offline sync passed the limit", abort: true)
                continue
            }
            if s.overflowed {
                if cuts < 1 {
                    cuts += 1
                    limits.node.metrics.slowConsumerHard.increment()
                    drop(s, .slowConsumer, "more than \(settings.outboundHardCapBytes) bytes queued", abort: true)
                } else {
                    cutLater.append(s)
                }
                continue
            }
            s.connection?.flush()
        }
        for s in cutLater { s.markDirty() }
        outboundBounds.turnEnded()
        routes.turnEnded(self)
        // What the turn's end committed and fanned out (sends read from
        // resumed publishers) is on its sessions' queues, flushed next turn as before.
        settleFanout()
    }

    /// A recipient of the turn's last run, written as soon as it has its
    /// events (`FlushList.recipientPacing`). One to close or cut is left to
    /// `flushAll`'s loop, which may end sessions: here the run still iterates them.
    @inline(__always)
    func flushRecipient(_ s: Session, _ pacing: FramePacing) {
        guard s.isDirty, !s.heldOverflow, !s.overflowed else { return }
        endTurn(of: s, pacing)
        s.connection?.flush()
    }

    /// What a dirty session gets before its write, however it is written:
    /// its typing and presence frames, and word to the homes when it fell
    /// behind or caught up (backpressure, docs/features.md: a session behind
    /// on its writes gets no typing, and its unread updates wait, collapsed to the latest).
    @inline(__always)
    private func endTurn(of s: Session, _ pacing: FramePacing) {
        frames.emit(s, pacing)
        s.isDirty = false
        s.answerHeld = false
        reportBehind(s)
    }

    /// Tells the home when a logged-in session falls behind on its writes or catches up.
    func reportBehind(_ s: Session) {
        guard s.isLoggedIn else { return }
        let behind = s.queuedBytes > settings.outboundShedBytes
        if behind != s.reportedBehind {
            s.reportedBehind = behind
            routes.tellEveryHome { $0.sessionBehind(s.key, behind) }
        }
    }

    func add(_ s: Session) {
        sessions[s.key] = s
        lent[s.key] = Unmanaged.passUnretained(s)
    }

    func remove(_ s: Session) {
        sessions.removeValue(forKey: s.key)
        pausingHomes.removeValue(forKey: s.key)
        lent[s.key] = nil
        settleFanout()
        interest.forget(session: s.key)
    }

    private func sweep() {
        let now = loop.nowMillis
        for g in routes.gathers.expired(now: now) {
            guard let s = sessions[g.session], s.isOpen else { continue }
            s.homeAnswered()
            s.fail(g.id, Failure(.unavailable, "a node did not answer in time; retry"))
        }
        interest.giveUpGapFills(now: now, on: self)
        requests.carryRefusedAgain { self.sessions[$0] }
        requests.resendOrphans(now: now) { self.sessions[$0] }
        webSocketDoor.endSlowHandshakes(now: now)
        let outbound = loop.outboundBytes
        let busy = Double(loop.busyNanoseconds) / 1e9, subscriptions = homeFigures?() ?? [:]
        let count = sessions.count
        var syncing = 0, detached = 0
        var webSocket = (sessions: 0, syncing: 0, detached: 0)
        let idleAfter = UInt64(settings.presenceIdleSeconds) * 1_000
        for s in sessions.values {
            let ws = s.decoder.webSocketEncoding != nil
            if ws { webSocket.sessions += 1 }
            if s.detached != nil {
                detached += 1
                if ws { webSocket.detached += 1 }
            } else if s.isSyncing {
                syncing += 1
                if ws { webSocket.syncing += 1 }
            }
        }
        limits.node.metrics.requestsTimed(byLoop: index, requestDurations.byKind)
        limits.node.metrics.loops.withLock {
            $0[index] = NodeMetrics.LoopFigures(sessions: count, syncing: syncing, detached: detached, webSocket: webSocket, outbound: outbound,
                                                outboundPeak: outboundBounds.peak,
                                                busySeconds: busy, subscriptions: subscriptions, lastSweep: now)
        }
        for s in Array(sessions.values) {
            if s.detached != nil { continue }
            requests.checkIdle(s, now: now, afterMs: idleAfter)
            switch s.liveness.verdict(at: now) {
            case .loginTimeout? where s.admissionAsked != nil:
                // The user's home did not answer the login in time (in a cluster,
                // its node died or gave the user's shard up meanwhile): UNAVAILABLE, not a silent close.
                s.fail(s.admissionAsked!, Failure(.unavailable, "the node that serves your account did not answer the login in time; retry"))
                close(s, .draining, "no node answered the login; reconnect")
                continue
            case .loginTimeout?: close(s, .loginTimeout, "no login within \(settings.loginDeadlineMs) ms"); continue
            case .idleTimeout?: drop(s, .heartbeatTimeout, "no complete frame received for \(settings.idleTimeoutMs) ms"); continue
            case .frameTimeout?: close(s, .frameTimeout, "a frame was not completed within \(settings.frameDeadlineMs) ms"); continue
            case nil: break
            }
            guard let c = s.connection else { continue }
            if c.queuedBytes > settings.outboundSoftCapBytes {
                let since = s.overSoftCapSince ?? now
                s.overSoftCapSince = since
                if now >= since + UInt64(settings.outboundSoftCapMs) {
                    limits.node.metrics.slowConsumerSoft.increment()
                    drop(s, .slowConsumer, "more than \(settings.outboundSoftCapBytes) bytes queued for \(settings.outboundSoftCapMs) ms", abort: true)
                    continue
                }
            } else {
                s.overSoftCapSince = nil
            }
            let unwritten = c.unwrittenBytes
            if c.queuedBytes > 0 && c.writesCompleted == s.writesSeen && unwritten >= s.unwrittenSeen {
                let since = s.stalledSince ?? now
                s.stalledSince = since
                if now >= since + UInt64(settings.writeStallMs) {
                    limits.node.metrics.slowConsumerStall.increment()
                    drop(s, .slowConsumer, "no write completed for \(settings.writeStallMs) ms with \(c.queuedBytes) bytes queued", abort: true)
                    continue
                }
            } else {
                s.stalledSince = nil
                s.writesSeen = c.writesCompleted
            }
            s.unwrittenSeen = unwritten
            // A session quiet since the last sweep gives back its buffers' room (idle sessions, docs/performance.md).
            if c.reviewRoom() { s.giveBackRoom() }
            // Writes complete while the kernel's buffers take the bytes (megabytes
            // on loopback): a frozen client shows as events it does not acknowledge.
            if s.unackedBytes >= Session.ackStallBytes && now >= s.unackedSince + UInt64(settings.writeStallMs) {
                limits.node.metrics.slowConsumerStall.increment()
                drop(s, .slowConsumer, "no event acknowledged for \(settings.writeStallMs) ms with \(s.unackedBytes) bytes of events unacknowledged",
                     abort: true)
                continue
            }
            // Unread updates that waited for the queue to drain.
            reportBehind(s)
        }
        expireDetached(now: now)
    }

    // MARK: Shutdown

    /// Stops accepting connections and reading requests.
    func stopAccepting() {
        guard !shuttingDown else { return }
        shuttingDown = true
        listener?.close()
        listener = nil
        webSocketDoor.stopAccepting()
        for s in sessions.values { s.connection?.stopReading() }
    }

    /// Closes the sessions of users in `shards` (another node serves them now), so their clients
    /// reconnect. A login whose admission is on its way counts too: the home it went to may still
    /// answer it after giving the shard up (as a node that stops does), and the session would then
    /// hang on a home that no longer knows it, hearing nothing, with no later move to end it.
    func closeSessions(ofShards shards: Set<Int>) {
        var closed = 0, logins = 0
        for s in Array(sessions.values) {
            let asked = s.isAwaitingLogin ? s.admissionAsked : nil
            guard !s.isAwaitingLogin || asked != nil, shards.contains(ShardPlan.shard(user: s.user, shards: settings.shards)) else { continue }
            if let asked { s.fail(asked, Failure(.unavailable, "your account's home moved to another node during the login; retry")) }
            close(s, .draining, "your account's home moved to another node; reconnect")
            closed += 1
            if asked != nil { logins += 1 }
        }
        if closed > 0 {
            log.info("homes moved: their users' sessions closed", ["loop": index, "shards": shards.sorted().description, "sessions": closed, "logins": logins])
        }
    }

    /// Tells every session why it ends, flushes, and closes the gateway's handles;
    /// peers that do not read their last bytes are cut off after the grace period.
    func closeAll(draining: Bool = false) {
        guard !closedAll else { return }
        closedAll = true
        for s in Array(sessions.values) {
            if draining {
                close(s, .draining, "this node is draining; reconnect (to another node, if there is one)")
            } else {
                close(s, .shuttingDown, "the server is shutting down; reconnect later")
            }
        }
        flushAll()
        closeHandles()
        if !lingering.isEmpty {
            let linger = LoopTimer(loop: loop)
            lingerTimer = linger
            linger.start(afterMillis: UInt64(max(100, settings.shutdownGraceMs)), repeatMillis: 0) { [unowned self] in
                for c in Array(self.lingering.values) { c.abort() }
            }
        }
    }

    /// Closes the listener and the gateway's timers (also when starting failed).
    func closeHandles() {
        flushCheck?.close()
        sweepTimer?.close()
        heldAnswers?.close()
        typingTimer?.close()
        listener?.close()
        listener = nil
        webSocketDoor?.close()
    }

    /// Tracks a closing connection until libuv releases it.
    func linger(_ c: TCPConnection) {
        let id = ObjectIdentifier(c)
        lingering[id] = c
        c.onReleased = { [unowned self] in
            self.lingering.removeValue(forKey: id)
            if self.closedAll && self.lingering.isEmpty {
                self.lingerTimer?.close()
                self.lingerTimer = nil
            }
        }
    }
}
