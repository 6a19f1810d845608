// Sessions that outlive their connection (docs/protocol.md): a dropped
// session is detached, keeps its subscriptions and collects events in its
// replay buffer for the resume window; a resume on a new connection takes it
// over and replays exactly what the client missed, then says "resumed". When
// that is no longer possible the resume becomes a fresh login with offline
// sync, never an error with events lost. Loop thread only.

import Glibc
import GuildhallCore
import GuildhallLoop
import GuildhallWire

extension Gateway {
    /// The connection is gone (or must go); the session waits for a resume
    /// when it is logged in and resuming is on, else it ends.
    func drop(_ s: Session, _ reason: GHCloseReason?, _ message: String, abort: Bool = false) {
        guard s.state.isAttached, settings.resumeWindowMs > 0, !shuttingDown else {
            close(s, reason, message, abort: abort)
            return
        }
        if let reason, !abort { s.sendClosed(reason, message) }
        log.info("session dropped; it may resume", ["user": s.user, "session": s.sessionID, "reason": reason.map { "\($0)" } ?? message,
                                                   "seq": s.eventSeq])
        routes.tellEveryHome { $0.sessionDetached(s.key, since: loop.nowMillis) }
        if let c = s.detach(at: loop.nowMillis, why: reason)?.connection {
            linger(c)
            if abort { c.abort() } else { c.close() }
        }
    }

    func resume(_ r: GHResume, id: UInt64, on fresh: Session) {
        checkToken(r.token, id: id, on: fresh) { [unowned self] token in self.resume(r, id: id, on: fresh, as: token) }
    }

    private func resume(_ r: GHResume, id: UInt64, on fresh: Session, as token: AccessToken) {
        let node = SessionID.node(of: r.sessionID)
        if node == settings.nodeID, let owner = SessionID.gateway(of: r.sessionID), owner != index, owner < peers.count,
           handOff(fresh, to: owner, r, id: id) {
            return
        }
        let failure: String
        var missed = MissedMessages()
        if let node, node != settings.nodeID {
            // In a cluster, the session lived on another node (which died or drained): its replay is gone with it.
            failure = "session \(r.sessionID) was on node \(node), not this one (\(settings.nodeID))"
        } else if let old = resumable(r.sessionID), old.user == token.user, old.device == token.device {
            if old.canResume(after: r.lastEventSeq) {
                limits.node.metrics.resumesReplayed.increment()
                takeOver(old, from: fresh, after: r.lastEventSeq, id: id)
                return
            }
            failure = "events after seq \(r.lastEventSeq) are no longer held (session at \(old.eventSeq), oldest held \(old.oldestReplayable))"
            missed = old.state.missed(after: r.lastEventSeq)
            close(old, .replaced, "resumed too late; logged in afresh")
        } else {
            failure = "no session \(r.sessionID) of this user and device is waiting to resume"
        }
        log.info("resume fell back to login and sync", ["user": token.user, "reason": failure])
        limits.node.metrics.resumesFellBack.increment()
        let fallback = ResumeFallback(token: token, autoSubscribe: r.autoSubscribe, id: id, failure: failure, missed: missed,
                                      asked: r.channels.prefix(ResumeFallback.maxChannels).map { ($0.channelID, $0.seq) })
        if fallback.asked.isEmpty { return admit(fresh, fallback) }
        routes.askTails(fallback, for: fresh)
    }

    /// The logged-in session a session id names, if it is still here.
    private func resumable(_ sessionID: String) -> Session? {
        guard let key = SessionID.key(of: sessionID), let s = sessions[key], s.sessionID == sessionID, s.isLoggedIn else { return nil }
        return s
    }

    /// Moves a connection that asks to resume a session of another loop to
    /// that loop's gateway, with what was read from it; false when the
    /// socket cannot move (the resume then goes on here and becomes a login).
    private func handOff(_ fresh: Session, to owner: Int, _ r: GHResume, id: UInt64) -> Bool {
        guard let socket = fresh.connection?.detachSocket() else { return false }
        log.debug("resume handed to the session's loop", ["from": index, "to": owner, "peer": fresh.peer])
        remove(fresh)
        _ = fresh.close(nil)
        peers[owner](HandOff(socket: socket, tls: fresh.connection?.tls, client: fresh.peer, decoder: fresh.decoder, resume: r, id: id))
        return true
    }

    /// A connection another gateway moved here: its resume goes on as if it had arrived here.
    func adopt(_ h: HandOff) {
        guard !shuttingDown, let connection = TCPConnection.adopt(loop: loop, socket: h.socket) else {
            Glibc.close(h.socket)
            return
        }
        // Already counted: the loop it came from still holds it until libuv lets go.
        if let tls = h.tls { connection.startTLS(tls, early: UnsafeRawBufferPointer(start: nil, count: 0)) }
        guard let session = accepted(connection, checkingCap: false, webSocket: h.decoder.webSocketEncoding, client: h.client, handedOff: true) else { return }
        session.decoder = h.decoder
        resume(h.resume, id: h.id, on: session)
    }

    private func takeOver(_ old: Session, from fresh: Session, after seq: UInt64, id: UInt64) {
        if old.state.isAttached, let stale = old.detach(at: loop.nowMillis, why: nil)?.connection {
            // The old connection has not noticed it is dead; this one replaces it.
            linger(stale)
            stale.abort()
        }
        remove(fresh)
        guard let sink = fresh.close(nil), let connection = sink.connection else { return }
        old.decoder = fresh.decoder
        old.decoder.maxFrameBytes = settings.maxFrameBytes
        old.liveness = SessionLiveness(now: loop.nowMillis, loginDeadlineMs: UInt64(settings.loginDeadlineMs),
                                       idleTimeoutMs: UInt64(settings.idleTimeoutMs))
        old.liveness.loggedIn(at: loop.nowMillis)
        old.outboundCap = settings.outboundHardCapBytes
        bind(connection, to: old)
        var result = GHLoginResult(user: old.user, device: old.device, sessionID: old.sessionID, settings: settings, now: clock())
        result.resumed = true
        let replayed = old.attach(sink, peer: fresh.peer, replayingAfter: seq) { why in
            if let why { result.previousCloseReason = why }
            old.respond(id, .login(result))
        }
        var resumed = GHResumed()
        resumed.replayed = UInt32(replayed)
        old.send(GHEvent.OneOf_Body.resumed(resumed).sharedPayload)
        old.reportedBehind = false
        routes.tellEveryHome { $0.sessionResumed(old.key) }
        log.info("session resumed", ["user": old.user, "session": old.sessionID, "replayed": replayed, "peer": old.peer])
        drainFrames(old)
    }

    /// Ends detached sessions whose resume window has passed.
    func expireDetached(now: UInt64) {
        for s in Array(sessions.values) {
            guard let d = s.detached, now >= d.since + UInt64(settings.resumeWindowMs) else { continue }
            close(s, nil, "resume window passed")
        }
    }
}
