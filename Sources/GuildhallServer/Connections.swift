// Connections from accept to close: reading frames, the login gate, and the
// one violation pattern (log with numbers, tell the peer in one frame, close
// with a typed reason). Loop thread only.

import Foundation
import GuildhallCore
import GuildhallLoop
import GuildhallWire
import SwiftProtobuf

extension GuildhallService {
    func accepted(_ connection: TCPConnection) {
        guard !shuttingDown else { connection.abort(); return }
        nextSessionKey += 1
        let liveness = SessionLiveness(now: loop.nowMillis, loginDeadlineMs: UInt64(settings.loginDeadlineMs),
                                       idleTimeoutMs: UInt64(settings.idleTimeoutMs))
        let session = Session(key: nextSessionKey, connection: connection, liveness: liveness,
                              maxFrameBytes: Limits.maxFrameBytesBeforeLogin, outboundCap: settings.outboundHardCapBytes,
                              flushList: flushList)
        registry.add(session)
        connection.onRead = { [unowned self, unowned session] bytes in self.received(bytes, on: session) }
        connection.onEnd = { [unowned self, unowned session] _ in self.close(session, nil, "peer closed") }
        connection.startReading()
        log.debug("connection accepted", ["peer": session.peer, "session": session.key])
    }

    private func received(_ bytes: UnsafeRawBufferPointer, on session: Session) {
        session.liveness.heard(at: loop.nowMillis)
        session.decoder.feed(bytes)
        while session.isOpen {
            let payload: [UInt8]?
            do {
                payload = try session.decoder.next()
            } catch {
                guard case .frameTooLarge(let announced, let limit) = error else { return }
                log.warn("frame too large", ["peer": session.peer, "announced": announced, "limit": limit])
                close(session, .frameTooLarge, "frame of \(announced) bytes is over the limit of \(limit)")
                return
            }
            guard let payload else { return }
            handle(payload: payload, on: session)
        }
    }

    private func handle(payload: [UInt8], on session: Session) {
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
        if session.phase == .awaitingLogin {
            guard case .login(let login) = body else {
                session.fail(request.id, Failure(.unauthenticated, "log in first: the first request must be login"))
                close(session, .authFailed, "request before login")
                return
            }
            self.login(login, id: request.id, on: session)
            return
        }
        route(body, id: request.id, from: session)
    }

    /// A bad frame: before login the stream is not trusted and is closed;
    /// after login the session gets an error and lives on.
    private func reject(_ session: Session, id: UInt64, _ failure: Failure) {
        log.debug("bad frame", ["peer": session.peer, "error": failure.message])
        session.fail(id, failure)
        if session.phase == .awaitingLogin { close(session, .protocolError, failure.message) }
    }

    private func login(_ login: GHLogin, id: UInt64, on session: Session) {
        let token: AccessToken
        do {
            token = try AccessToken.verify(login.token, secret: secret, nowSeconds: now() / 1000)
        } catch {
            log.info("login refused", ["peer": session.peer, "reason": error.message])
            session.fail(id, error)
            close(session, .authFailed, error.message)
            return
        }
        let existing = registry.sessions(of: token.user)
        let replaced = existing.values.first { $0.device == token.device }
        if replaced == nil && existing.count >= settings.maxSessionsPerUser {
            let failure = Failure(.limitReached, "\(token.user) already has \(existing.count) sessions online; the limit is \(settings.maxSessionsPerUser)")
            session.fail(id, failure)
            close(session, .authFailed, failure.message)
            return
        }
        if let replaced { close(replaced, .replaced, "replaced by a new login on device \(token.device)") }
        session.user = token.user
        session.device = token.device
        session.sessionID = "\(settings.nodeID)-\(session.key)-\(UInt32.random(in: 0...UInt32.max))"
        session.phase = .active
        session.liveness.loggedIn(at: loop.nowMillis)
        session.decoder.maxFrameBytes = settings.maxFrameBytes
        registry.loggedIn(session, servers: directory.serverIDs(of: token.user))
        book.open(session.key, user: token.user)
        var result = GHLoginResult()
        result.userID = token.user
        result.deviceID = token.device
        result.sessionID = session.sessionID
        result.heartbeatIntervalMs = UInt32(settings.heartbeatIntervalMs)
        result.serverTime = now()
        session.respond(id, .login(result))
        if login.autoSubscribe { enableAutoMode(session) }
        log.info("login", ["user": token.user, "device": token.device, "peer": session.peer, "session": session.sessionID])
    }

    /// Ends a session: tells the peer why (when there is a reason), flushes,
    /// and closes. `abort` drops unsent bytes (slow consumers).
    func close(_ session: Session, _ reason: GHCloseReason?, _ message: String, abort: Bool = false) {
        guard session.isOpen else { return }
        if let reason, !abort {
            var closed = GHSessionClosed()
            closed.reason = reason
            closed.message = message
            session.push(event: GHEvent.OneOf_Body.closed(closed).sharedPayload)
        }
        if let reason { log.info("session closed", ["peer": session.peer, "user": session.user, "reason": reason, "detail": message]) }
        session.phase = .closed
        registry.remove(session, servers: session.user.isEmpty ? [] : directory.serverIDs(of: session.user))
        book.close(session.key)
        typingOwed.remove(session.key)
        if session.autoSubscribe && !hasAutoSessions(session.user) { ladders.removeValue(forKey: session.user) }
        linger(session.connection)
        if abort { session.connection.abort() } else { session.connection.close() }
    }
}
