// A gateway's connections from accept to close: reading frames, the login
// gate (the request table's phase check, and tokens), and the one violation
// pattern (log with numbers, tell the peer in one frame, close with a typed
// reason). Ending a session for good is `close`; losing only its connection
// is `drop` (Resumption.swift). Loop thread only.

import Foundation
import GuildhallCore
import GuildhallLoop
import GuildhallWire
import SwiftProtobuf

/// The rate classes of the two requests `handle` reads by hand, from their rows.
private let sendRate = GHRequest.OneOf_Body.sendMessage(GHSendMessage()).rule.rate
private let ackRate = GHRequest.OneOf_Body.ack(GHAck()).rule.rate

extension Gateway {
    @discardableResult
    /// `handedOff`: a connection another loop moved here, past its PROXY header and TLS handshake.
    func accepted(_ connection: TCPConnection, checkingCap: Bool = true, webSocket: WebSocketEncoding? = nil, client: String? = nil,
                  handedOff: Bool = false) -> Session? {
        guard !shuttingDown else { connection.abort(); return nil }
        connection.count = limits.node.connections
        // What a slow client has not taken waits in the session's queue, where the
        // slow-consumer caps see it, not megabytes of it in the kernel's buffers.
        if settings.socketSendBufferBytes > 0 { connection.setSendBuffer(bytes: settings.socketSendBufferBytes) }
        sessionCounter = Place.nextSessionCounter(after: sessionCounter, nowMs: systemClock())
        let liveness = SessionLiveness(now: loop.nowMillis, loginDeadlineMs: UInt64(settings.loginDeadlineMs),
                                       idleTimeoutMs: UInt64(settings.idleTimeoutMs), frameDeadlineMs: UInt64(settings.frameDeadlineMs))
        // The key's low byte names this gateway, so a resume on another loop finds the session's.
        let sink: any FrameSink = webSocket.map { WebSocketFrameSink(connection, json: $0 == .json ? jsonEvents : nil) } ?? TCPFrameSink(connection)
        let session = Session(key: Place.sessionKey(sessionCounter, node: settings.nodeID, loop: index), sink: sink, peer: client ?? connection.peer, liveness: liveness,
                              maxFrameBytes: Limits.maxFrameBytesBeforeLogin, outboundCap: settings.outboundHardCapBytes,
                              replayCapacity: settings.resumeEvents, replayBytes: settings.resumeBytes, gateway: self)
        if let webSocket {
            session.decoder = InboundFrames(webSocket: webSocket, maxFrameBytes: Limits.maxFrameBytesBeforeLogin)
        }
        add(session)
        // A TCP client's first bytes may be a PROXY header, then TLS (a browser's came before its handshake: WebSocketDoor).
        if webSocket == nil && !handedOff { readProxyHeader(connection, on: session) } else { bind(connection, to: session) }
        if checkingCap, limits.node.connections.current > limits.connectionCap {
            log.warnRepeated("connection refused: server full", ["peer": session.peer, "cap": limits.connectionCap])
            close(session, .serverFull, "the server holds its most connections (\(limits.connectionCap)); reconnect later")
            return nil
        }
        connection.startReading()
        log.debug("connection accepted", ["peer": session.peer, "session": session.key])
        return session
    }

    /// Routes a connection's bytes and end to `session` (again after a resume).
    func bind(_ connection: TCPConnection, to session: Session) {
        connection.onRead = { [unowned self, unowned session] bytes in self.received(bytes, on: session) }
        connection.onEnd = { [unowned self, unowned session] _ in self.drop(session, nil, "peer closed") }
    }

    /// Reads a connection's first bytes until it is clear whether they are a
    /// PROXY header: from a trusted proxy it names the client, from anyone
    /// else it is refused; then the session reads as any other, from the
    /// first byte after the header.
    private func readProxyHeader(_ connection: TCPConnection, on session: Session) {
        let trusted = limits.proxies.trusts(session.peer)
        var head: [UInt8] = []
        connection.onRead = { [unowned self, unowned session, unowned connection] bytes in
            head += bytes
            let start: Int
            switch ProxyHeader.decide(head, peer: session.peer, trusted: trusted) {
            case .needMore: return
            case .refuse(let why): return self.close(session, .protocolError, why)
            case .proceed(let client, let from):
                if let client { session.proxied(for: client) }
                start = from
            }
            self.bind(connection, to: session)
            head[start...].withUnsafeBytes { rest in
                // The client listener may speak TLS: what follows the PROXY header is its handshake.
                if self.settings.tlsClient == "on" {
                    guard let tls = self.limits.node.certificates.stream() else { return self.close(session, nil, "no TLS certificate") }
                    connection.startTLS(tls, early: rest)
                } else if !rest.isEmpty {
                    self.received(rest, on: session)
                }
            }
        }
        connection.onEnd = { [unowned self, unowned session] _ in self.drop(session, nil, "peer closed") }
    }

    private func received(_ bytes: UnsafeRawBufferPointer, on session: Session) {
        if let webSocket = session.decoder.feed(bytes) { read(webSocket, on: session) }
        drainFrames(session)
        // Bytes left over while frames are being read are an unfinished frame, whose clock runs.
        session.liveness.partialFrame(session.readPauses.isEmpty && session.decoder.bufferedBytes > 0, at: loop.nowMillis)
    }

    /// What reading WebSocket bytes called for: wslay's replies (pongs, a
    /// close) written as they are, and the end of a stream that broke the
    /// protocol or its size limit (wslay's close says why) or that the peer closed.
    private func read(_ out: WebSocketReader.Output, on session: Session) {
        session.queueFramed(out.reply)
        if out.failed || out.peerClosed != nil {
            drainFrames(session)
            close(session, nil, out.failed ? "the WebSocket stream broke the protocol or its size limit" : "peer closed")
        }
    }

    /// Handles every whole frame the session's decoder holds; while the
    /// session's reading is paused the rest wait there (a read of 64 KiB can
    /// hold 500 sends, each fanned out to a thousand sessions), and
    /// `readingResumed` goes on with them.
    func drainFrames(_ session: Session) {
        // Resuming reading from inside a handler (a login admitted at once)
        // leaves the frames to the loop already running below.
        guard !session.draining else { return }
        session.draining = true
        defer { session.draining = false }
        // Plain sends read one after another go to their home together
        // (SendRun.swift); anything else read, or the run's end, sends them on first.
        var run = SendRun()
        // The frames of one drain came in together: their requests are timed from one clock reading.
        let readAt = UnansweredRequests.now()
        while session.isOpen && session.detached == nil && session.readPauses.isEmpty {
            let payload: [UInt8]?
            do {
                payload = try session.decoder.next()
            } catch {
                guard case .frameTooLarge(let announced, let limit) = error else { return send(&run, from: session) }
                send(&run, from: session)
                // Before login the close's own (rate-limited) line says it: strangers' floods cost one line per interval.
                if session.isLoggedIn { log.warnRepeated("frame too large", ["peer": session.peer, "announced": announced, "limit": limit]) }
                close(session, .frameTooLarge, "frame of \(announced) bytes is over the limit of \(limit)")
                return
            }
            guard let payload else { return send(&run, from: session) }
            handle(payload: payload, on: session, run: &run, readAt: readAt)
        }
        // (Every way the loop ends sent the run on already; this only keeps that true.)
        send(&run, from: session)
    }

    /// The run's sends to their channel's home, unless the session ended meanwhile.
    private func send(_ run: inout SendRun, from session: Session) {
        guard !run.isEmpty else { return }
        let (sends, bytes) = run.take()
        if session.isOpen { routes.sendMessages(sends, from: session, bytes: bytes) }
    }

    private func handle(payload: [UInt8], on session: Session, run: inout SendRun, readAt: UInt64) {
        session.liveness.heard(at: loop.nowMillis)
        // The two frames a busy session sends most, read by hand (MessageWire),
        // checked by their own rows of the request table; anything else, or
        // anything unusual in them, goes through the generated decoder below.
        if !session.isAwaitingLogin, let (id, request) = SendRequest.read(payload) {
            if !run.takes(request.channelID) { send(&run, from: session) }
            // A refusal (or the close after too many) comes after the sends read before it.
            guard withinRate(sendRate, id: id, on: session, first: { send(&run, from: session) }) else { return }
            requests.active(session)
            session.unanswered.read(id, "send_message", at: readAt)
            run.add(request, id: id, bytes: payload.count)
            if run.isFull { send(&run, from: session) }
            return
        }
        send(&run, from: session)
        if !session.isAwaitingLogin, let (id, seq) = MessageWire.readAck(payload) {
            // (Its row's target is the gateway: no home answers it, so it is not timed.)
            guard withinRate(ackRate, id: id, on: session) else { return }
            if ackRate != .session { requests.active(session) }
            return acknowledged(seq, id: id, on: session)
        }
        let request: GHRequest
        do {
            let frame = try GHFrame(serializedBytes: payload)
            guard case .request(let r)? = frame.kind else {
                reject(session, id: 0, .badRequest("a client sends only request frames"))
                return
            }
            request = r
        } catch {
            reject(session, id: 0, .badRequest("malformed frame: the payload is not a guildhall.v1.Frame"))
            return
        }
        guard let body = request.body else {
            reject(session, id: request.id, .badRequest("unknown request: the body is empty or of a kind this server does not know"))
            return
        }
        // The request table's phase check, once for every kind.
        let rule = body.rule
        switch (session.isAwaitingLogin, rule.phase) {
        case (true, .opensSession):
            session.unanswered.read(request.id, body.kindLabel, at: readAt)
            if case .login(let login) = body { self.login(login, id: request.id, on: session) }
            if case .resume(let resume) = body { self.resume(resume, id: request.id, on: session) }
        case (true, .loggedIn):
            session.fail(request.id, Failure(.unauthenticated, "log in first: the first request must be login or resume"))
            close(session, .authFailed, "request before login")
        case (false, .opensSession):
            session.fail(request.id, Failure(.conflict, "already logged in as \(session.user)"))
        case (false, .loggedIn):
            guard withinRate(rule.rate, id: request.id, on: session) else { return }
            if rule.rate != .session { requests.active(session) }
            if rule.target != .gateway { session.unanswered.read(request.id, body.kindLabel, at: readAt) }
            if rule.target == .gateway, answer(body, id: request.id, on: session) { return }
            if case .sendMessage(let r) = body {
                return routes.sendMessages([PendingSend(request: SendRequest(r), id: request.id)], from: session, bytes: payload.count)
            }
            requests.noteForCarry(body, of: session)
            routes.route(body, rule: rule, id: request.id, from: session, bytes: payload.count)
        }
    }

    /// The requests about the session itself, which its gateway answers; false for the rest.
    private func answer(_ body: GHRequest.OneOf_Body, id: UInt64, on s: Session) -> Bool {
        switch body {
        case .heartbeat(let h):
            if h.lastEventSeq != 0 { acknowledge(h.lastEventSeq, on: s) }
            var pong = GHPong()
            pong.serverTime = clock()
            s.respond(id, .pong(pong))
        case .ack(let a):
            acknowledged(a.eventSeq, received: a.received, id: id, on: s)
        case .logout:
            s.respond(id, .ok(GHOk()))
            close(s, .loggedOut, "logged out")
        default:
            return false
        }
        return true
    }

    /// An acknowledgement, read by hand or decoded: the events up to `seq`
    /// are the client's, the messages it says it received go to their homes,
    /// and it is answered with bytes written by hand, with the session's next write (HeldAnswers.swift).
    private func acknowledged(_ seq: UInt64, received: [GHReceivedUpTo] = [], id: UInt64, on s: Session) {
        acknowledge(seq, on: s)
        if !received.isEmpty { routes.received(received.prefix(Limits.maxIdsPerRequest).map { ($0.channelID, $0.seq) }, from: s) }
        s.queueAnswer(encoded: MessageWire.okAnswer(id: id), held: true)
    }

    /// The client has every event up to `seq`; the home hears when its inbox position moved or an offline package is done.
    private func acknowledge(_ seq: UInt64, on s: Session) {
        let moved = s.acknowledge(upTo: seq)
        let packageAcked = s.awaitingPackageSeq != 0 && seq >= s.awaitingPackageSeq
        if packageAcked { s.awaitingPackageSeq = 0 }
        if moved || packageAcked { routes.acknowledged(session: s.key, ackedOrd: s.ackedOrd, packageAcked: packageAcked) }
    }

    /// A bad frame: before login the stream is not trusted and is closed;
    /// after login the session gets an error and lives on.
    private func reject(_ session: Session, id: UInt64, _ failure: Failure) {
        log.debug("bad frame", ["peer": session.peer, "error": failure.message])
        session.fail(id, failure)
        if session.isAwaitingLogin { close(session, .protocolError, failure.message) }
    }

    private func login(_ login: GHLogin, id: UInt64, on session: Session) {
        checkToken(login.token, id: id, on: session) { [unowned self] token in
            self.admit(session, token, autoSubscribe: login.autoSubscribe, id: id, resumeFailure: "")
        }
    }

    /// Asks the home to log `session` in; its later frames wait for the answer.
    func admit(_ session: Session, _ token: AccessToken, autoSubscribe: Bool, id: UInt64, resumeFailure: String, missed: MissedMessages = MissedMessages()) {
        guard routes.canAdmit(token.user) else {
            // In a cluster, no node holds this user's state for a moment (its shard is moving).
            session.fail(id, Failure(.unavailable, "no node serves user \(token.user) now; retry"))
            close(session, .draining, "no node serves your account now; reconnect")
            return
        }
        session.pauseReading(.admission)
        session.admissionAsked = id
        session.user = token.user
        session.autoSubscribeAtLogin = autoSubscribe
        routes.admit(Admission(key: session.key, token: token, autoSubscribe: autoSubscribe, id: id, resumeFailure: resumeFailure, missed: missed,
                               peer: session.peer, gatewayLife: limits.node.cluster.life))
    }

    /// Runs `then` with the token's identity, at once for a v1 token and once
    /// verified off the loop for a JWT (TokenChecks.swift; the session is not
    /// read meanwhile); a token that fails is answered and its connection
    /// closed instead. A user or address that failed too often lately is
    /// refused without a check.
    func checkToken(_ text: String, id: UInt64, on session: Session, then: @escaping (AccessToken) -> Void) {
        let user = TokenKeys.isJWT(text) ? TokenKeys.claimedUser(text) : AccessToken.claimedUser(text), address = String(session.peerAddress)
        let interval = UInt64(settings.loginFailureIntervalMs)
        let wait = limits.node.loginWait(user: user, peer: address, now: loop.nowMillis, burst: settings.loginFailuresBurst, intervalMs: interval)
        guard wait == 0 else {
            log.warnRepeated("login refused unchecked: too many failures", ["peer": session.peer, "retry_after_ms": wait])
            limits.node.metrics.loginFailed("rate_limited")
            session.fail(id, .rateLimited("too many failed logins for this user or address; retry after \(wait) ms",
                                          retryAfterMs: UInt32(clamping: wait)))
            close(session, .closedRateLimited, "too many failed logins")
            return
        }
        let settle = { [unowned self] (outcome: TokenChecks.Outcome) in
            switch outcome {
            case .success(let token): then(token)
            case .failure(let error): self.loginRefused(error, claimed: user, on: session, id: id)
            }
        }
        guard TokenKeys.isJWT(text) else {
            return settle(Result { () throws(Failure) in try AccessToken.verify(text, secret: secret, nowSeconds: self.clock() / 1000) })
        }
        guard let tokenChecks else { return settle(.failure(Failure(.unauthenticated, "malformed token: v1 tokens only here"))) }
        session.pauseReading(.admission)
        tokenChecks.check(text, for: session.key, nowSeconds: clock() / 1000) { outcome in
            guard session.isOpen, session.isAwaitingLogin else { return }
            // Not read yet: the admission that follows pauses it again, until the home admits it.
            session.unpause(.admission)
            settle(outcome)
        }
    }

    /// A token that failed: counted against the user it claims (a JWT's once verified) and the address, answered, closed.
    private func loginRefused(_ error: Failure, claimed: UserID?, on session: Session, id: UInt64) {
        limits.node.loginFailed(user: claimed, peer: String(session.peerAddress), now: loop.nowMillis,
                                intervalMs: UInt64(settings.loginFailureIntervalMs))
        let m = error.message
        limits.node.metrics.loginFailed(m.contains("signature") ? "signature" : m.contains("expired") ? "expired"
                                        : m.contains("identity") ? "identity" : "malformed")
        log.info("login refused", ["peer": session.peer, "reason": error.message])
        session.fail(id, error)
        close(session, .authFailed, error.message)
    }

    /// Takes one request of `rate` from the session's budget; false after
    /// answering it 429 or, when refusals keep coming, closing the session.
    /// `first`: runs before a refusal is answered (sends read before it go on first).
    private func withinRate(_ rate: RateClass, id: UInt64, on s: Session, first: () -> Void = {}) -> Bool {
        let verdict = s.budget.take(rate.index, rates: limits.rates, maxStrikes: settings.rateStrikes, now: loop.nowMillis)
        if case .allowed = verdict { return true }
        first()
        switch verdict {
        case .allowed:
            return true
        case .refused(let ms):
            limits.node.metrics.refused("\(rate)")
            s.fail(id, .rateLimited("over the \(rate) request rate; retry after \(ms) ms", retryAfterMs: ms))
            return false
        case .abusive:
            log.warnRepeated("session closed for its request rate", ["peer": s.peer, "user": s.user])
            close(s, .closedRateLimited, "kept sending over its request rate after \(settings.rateStrikes) refusals in 10 s")
            return false
        }
    }

    /// Drops a reason not to read `s`; once none is left, the frames it sent meanwhile are handled.
    func readingResumed(_ s: Session, _ reason: ReadPauses) {
        s.unpause(reason)
        if s.readPauses.isEmpty { drainFrames(s) }
    }

    /// Ends a session for good: tells the peer why (when there is a reason
    /// and a connection), saves how far its device synced, flushes, and
    /// closes. `abort` drops unsent bytes (slow consumers).
    func close(_ session: Session, _ reason: GHCloseReason?, _ message: String, abort: Bool = false) {
        guard session.isOpen else { return }
        tokenChecks?.forget(session.key)
        if let reason, !abort { session.sendClosed(reason, message) }
        limits.node.metrics.closed(reason.map { "\($0)" } ?? "none")
        let wasLoggedIn = session.isLoggedIn
        // Every session's end, once, whatever ended it (the peer, a new login, the resume window, shutdown).
        // Connections that never logged in can come in floods (bad input, scanners: docs/reliability.md
        // B2): one line per interval with the count held back; the metric counts each.
        let fields: KeyValuePairs<String, Any> = ["peer": session.peer, "user": session.user, "reason": reason.map { "\($0)" } ?? "none", "detail": message]
        if wasLoggedIn { log.info("session closed", fields) } else { log.infoRepeated("connection closed before login", fields) }
        let connection = session.close(reason)?.connection
        remove(session)
        if wasLoggedIn { routes.tellEveryHome { $0.sessionEnded(session.key, ackedOrd: session.ackedOrd, reconnecting: reason == .draining) } }
        if let c = connection {
            linger(c)
            if abort { c.abort() } else { c.close() }
        }
    }
}

extension Session {
    /// The socket its frames go to (nil while detached): the gateway's, to read, flush, close or move.
    var connection: TCPConnection? { sink?.connection }
}
