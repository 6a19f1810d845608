// Admitting a session (the home's side of a login): one session per user
// and device, the per-user session limit, the user's interest in its
// servers, auto-subscribe mode, then offline sync. Loop thread only.

import GuildhallCore
import GuildhallWire

extension GuildhallService {
    /// Logs a connection in as a new session of `token`'s user and device,
    /// then runs offline sync. `resumeFailure`: why a resume became a login.
    func admit(_ session: Session, _ token: AccessToken, autoSubscribe: Bool, id: UInt64, resumeFailure: String) {
        let existing = registry.sessions(of: token.user)
        if let replaced = existing.values.first(where: { $0.device == token.device }) {
            gateway.close(replaced, .replaced, "replaced by a new login on device \(token.device)")
        }
        let others = registry.sessions(of: token.user).values
        if others.count >= settings.maxSessionsPerUser {
            // A dropped session waiting for its resume yields to a live login.
            if let oldest = others.compactMap({ s in s.detached.map { (s, $0.since) } }).min(by: { $0.1 < $1.1 })?.0 {
                gateway.close(oldest, nil, "made room for a new login")
            } else {
                let failure = Failure(.limitReached, "\(token.user) already has \(others.count) sessions online; the limit is \(settings.maxSessionsPerUser)")
                session.fail(id, failure)
                gateway.close(session, .authFailed, failure.message)
                return
            }
        }
        // Live events wait until sync is done; items up to the horizon come from the inbox.
        session.loggedIn(token.user, device: token.device, sessionID: "\(settings.nodeID)-\(session.key)-\(UInt32.random(in: 0...UInt32.max))",
                         horizon: runner.inboxFanned)
        session.liveness.loggedIn(at: loop.nowMillis)
        session.decoder.maxFrameBytes = settings.maxFrameBytes
        registry.loggedIn(session, servers: directory.serverIDs(of: token.user))
        book.open(session.key, user: token.user)
        var result = loginResult(for: session)
        result.resumeFailure = resumeFailure
        session.respond(id, .login(result))
        if autoSubscribe { subscriptions.enableAutoMode(session) }
        log.info("login", ["user": token.user, "device": token.device, "peer": session.peer, "session": session.sessionID])
        userHome.beginSync(session)
    }

    /// The answer to a login or a resume of `session`.
    func loginResult(for session: Session) -> GHLoginResult {
        var result = GHLoginResult()
        result.userID = session.user
        result.deviceID = session.device
        result.sessionID = session.sessionID
        result.heartbeatIntervalMs = UInt32(settings.heartbeatIntervalMs)
        result.serverTime = now()
        return result
    }


    /// A session ended (GatewayHome): it leaves the interest index and its
    /// subscriptions, its device's sync cursor is kept, and auto mode ends
    /// with the user's last auto session.
    func sessionEnded(_ s: Session, wasLoggedIn: Bool) {
        registry.remove(s, servers: s.user.isEmpty ? [] : directory.serverIDs(of: s.user))
        book.close(s.key)
        typing.forget(s)
        if wasLoggedIn {
            userHome.saveCursor(of: s)
            if s.autoSubscribe && !subscriptions.hasAutoSessions(s.user) { subscriptions.ladders.removeValue(forKey: s.user) }
        }
    }
}
