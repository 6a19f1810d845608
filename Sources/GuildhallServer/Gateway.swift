// A gateway (DESIGN §9): the loop's side of its sessions. It accepts
// connections, reads and decodes frames, authenticates, keeps each session's
// liveness and backpressure, flushes once per loop turn, drops and resumes
// sessions, and closes them with a reason. What it cannot decide itself it
// asks of the homes behind it (`GatewayHome`): today the rest of the service
// on the same loop, by calls; once loops and nodes split, by messages. It
// touches its sessions, their connections and the loop; nothing of the
// directory or the store. Loop thread only.
//
// Files: this one (state, flushing, liveness, caps, shutdown), Connections.swift
// (accept to close), Resumption.swift (drop and resume), PublisherPause.swift.

import GuildhallCore
import GuildhallLoop
import GuildhallWire

/// What a gateway asks of the homes behind it.
protocol GatewayHome: AnyObject {
    /// A connection proved who it is: log it in as a new session (and run offline sync).
    func admit(_ s: Session, _ token: AccessToken, autoSubscribe: Bool, id: UInt64, resumeFailure: String)
    /// The answer to a login or a resume of `s`.
    func loginResult(for s: Session) -> GHLoginResult
    /// A logged-in session's request that passed the request table's checks.
    func route(_ body: GHRequest.OneOf_Body, id: UInt64, from s: Session)
    /// A send read straight from the frame (the hot path).
    func sendMessage(_ r: SendRequest, id: UInt64, from s: Session, checkResend: Bool)
    /// The session ended: forget it everywhere (interest, subscriptions, auto mode) and keep its device's cursor.
    func sessionEnded(_ s: Session, wasLoggedIn: Bool)
    /// The session lost its connection and may resume.
    func sessionDetached(_ s: Session)
    /// The loop turn ends, before sessions are flushed: commit the turn's jobs, send what is coalesced per turn.
    func turnEnding()
    /// At flush, a session not behind on its writes: the coalesced events it is owed.
    func owedEvents(_ s: Session)
    /// At flush, a session behind on its writes: drop what it is owed that may be shed.
    func shedEvents(_ s: Session)
}

final class Gateway {
    var settings: Settings
    let log: ServerLog
    let loop: EventLoop
    /// Verifies login tokens.
    let secret: [UInt8]
    let clock: @Sendable () -> UInt64
    unowned let home: any GatewayHome
    let registry: SessionRegistry
    let flushList = FlushList()
    private var flushCheck: LoopCheck!
    private var sweepTimer: LoopTimer!
    private var listener: TCPListener?
    var nextSessionKey: UInt64 = 0
    /// Publishers not read while the loop's outbound bytes drain (PublisherPause.swift).
    var pausedPublishers: [Session] = []
    /// Bytes the fan-out of sends waiting for their commit will queue (PublisherPause.swift).
    var pendingFanOutBytes = 0
    /// No more connections or requests: the server is shutting down.
    private(set) var shuttingDown = false
    /// Connections closing gracefully, until libuv releases them.
    private var lingering: [ObjectIdentifier: TCPConnection] = [:]
    private var lingerTimer: LoopTimer?
    private var closedAll = false

    init(loop: EventLoop, settings: Settings, log: ServerLog, secret: [UInt8], clock: @escaping @Sendable () -> UInt64,
         registry: SessionRegistry, home: any GatewayHome) {
        self.loop = loop
        self.registry = registry
        self.settings = settings
        self.log = log
        self.secret = secret
        self.clock = clock
        self.home = home
        flushCheck = LoopCheck(loop: loop) { [unowned self] in self.flushAll() }
        sweepTimer = LoopTimer(loop: loop)
        let sweepEvery = UInt64(max(50, min(1000, min(settings.loginDeadlineMs, settings.idleTimeoutMs) / 4)))
        sweepTimer.start(afterMillis: sweepEvery, repeatMillis: sweepEvery) { [unowned self] in self.sweep() }
    }

    /// Starts accepting connections on `settings.listen`.
    func listen() throws {
        guard let (host, port) = SocketAddress.split(settings.listen) else {
            throw SettingsError(description: "listen must be HOST:PORT, not \(settings.listen)")
        }
        listener = try TCPListener(loop: loop, host: host, port: port) { [unowned self] in self.accepted($0) }
    }

    /// The port the listener bound.
    var port: Int { listener?.port ?? 0 }

    func now() -> UInt64 { clock() }

    // MARK: Flushing and liveness

    /// Once per loop turn: this turn's commits, then one write per session with bytes queued.
    func flushAll() {
        home.turnEnding()
        let sessions = flushList.sessions
        flushList.sessions.removeAll(keepingCapacity: true)
        // Cutting a connection cancels its queued writes, thousands for a full
        // slow consumer; one cut per turn keeps that off other sessions' latency
        // (measured: 20 stalled subscribers cut in one turn added ~30 ms to the
        // healthy ones' p99.9; one per turn, within noise).
        var cuts = 0
        var cutLater: [Session] = []
        for s in sessions {
            s.isDirty = false
            // Backpressure (MISSION §10): a session behind on its writes gets
            // no typing, and its unread updates wait, collapsed to the latest.
            let queued = s.connection?.queuedBytes ?? 0
            if queued <= settings.outboundShedBytes {
                home.owedEvents(s)
            } else {
                home.shedEvents(s)
            }
            if s.heldOverflow {
                close(s, .slowConsumer, "live events waiting for an unacknowledged offline sync passed the limit", abort: true)
                continue
            }
            if s.overflowed {
                if cuts < 1 {
                    cuts += 1
                    drop(s, .slowConsumer, "more than \(settings.outboundHardCapBytes) bytes queued", abort: true)
                } else {
                    cutLater.append(s)
                }
                continue
            }
            s.connection?.flush()
        }
        for s in cutLater { s.markDirty() }
        resumePublishersIfDrained()
    }

    private func sweep() {
        let now = loop.nowMillis
        for s in Array(registry.all.values) {
            if s.detached != nil { continue }
            switch s.liveness.verdict(at: now) {
            case .loginTimeout?: close(s, .loginTimeout, "no login within \(settings.loginDeadlineMs) ms"); continue
            case .idleTimeout?: drop(s, .heartbeatTimeout, "nothing received for \(settings.idleTimeoutMs) ms"); continue
            case nil: break
            }
            guard let c = s.connection else { continue }
            if c.queuedBytes > settings.outboundSoftCapBytes {
                let since = s.overSoftCapSince ?? now
                s.overSoftCapSince = since
                if now >= since + UInt64(settings.outboundSoftCapMs) {
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
                    drop(s, .slowConsumer, "no write completed for \(settings.writeStallMs) ms with \(c.queuedBytes) bytes queued", abort: true)
                    continue
                }
            } else {
                s.stalledSince = nil
                s.writesSeen = c.writesCompleted
            }
            s.unwrittenSeen = unwritten
            // Unread updates that waited for the queue to drain.
            if !s.pendingUnread.isEmpty && c.queuedBytes <= settings.outboundShedBytes { s.markDirty() }
        }
        expireDetached(now: now)
        enforceTotalOutboundCap()
    }

    /// Past the cap on all queued bytes, cuts the sessions with the most
    /// queued first (they resume), so memory stays bounded whatever the clients do.
    private func enforceTotalOutboundCap() {
        var total = 0
        var queued: [(Int, Session)] = []
        for s in registry.all.values {
            guard let c = s.connection, c.queuedBytes > 0 else { continue }
            total += c.queuedBytes
            queued.append((c.queuedBytes, s))
        }
        guard total > settings.outboundTotalCapBytes else { return }
        for (bytes, s) in queued.sorted(by: { $0.0 > $1.0 }) where total > settings.outboundTotalCapBytes {
            total -= bytes
            drop(s, .slowConsumer, "all sessions together queue more than \(settings.outboundTotalCapBytes) bytes; this one the most (\(bytes))", abort: true)
        }
    }

    // MARK: Shutdown

    /// Stops accepting connections and reading requests.
    func stopAccepting() {
        guard !shuttingDown else { return }
        shuttingDown = true
        listener?.close()
        listener = nil
        for s in registry.all.values { s.connection?.stopReading() }
    }

    /// Tells every session why it ends, flushes, and closes the gateway's handles;
    /// peers that do not read their last bytes are cut off after the grace period.
    func closeAll() {
        guard !closedAll else { return }
        closedAll = true
        for s in Array(registry.all.values) { close(s, .shuttingDown, "the server is shutting down; reconnect later") }
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
        listener?.close()
        listener = nil
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
