// Authentication (docs/reliability.md): A1 and A2, what a connection gets before and
// around its login; A6, guessing at one account.

import Foundation
import GuildhallCore
import GuildhallWire

enum AuthChecks {
    /// A1: any request before login is answered 401 and the connection closed, with nothing
    /// else on it. A2: no login within the deadline -> LOGIN_TIMEOUT; a bad token -> 401 and
    /// AUTH_FAILED, no second try on that connection; a second login -> 409, the session lives on.
    static func beforeAndAroundLogin(_ profile: ReliabilityProfile, _ seed: UInt64) throws -> CheckOutcome {
        let deadline = profile == .full ? 5_000 : 1_000
        let server = try ReliabilityServer(["login-deadline-ms=\(deadline)"])
        defer { server.stop() }
        var failures: [String] = []
        func frames(_ c: ProbeClient) -> [GHFrame] {
            var out: [GHFrame] = []
            while let f = c.next(until: Date().addingTimeInterval(Double(deadline) / 1000 + 5)) { out.append(f) }
            return out
        }
        func closes(_ fs: [GHFrame]) -> [GHCloseReason] { fs.compactMap { if case .closed(let c)? = $0.event.body { c.reason } else { nil } } }
        func errors(_ fs: [GHFrame]) -> [GHErrorCode] { fs.compactMap { if case .error(let e)? = $0.response.result { e.code } else { nil } } }

        // A1: every kind of request but login and resume, each first on its own connection.
        var create = GHCreateServer()
        create.name = "x"
        var history = GHGetHistory()
        history.channelID = 1
        var send = GHSendMessage()
        send.channelID = 1
        send.body.text = "x"
        for body: GHRequest.OneOf_Body in [.heartbeat(GHHeartbeat()), .listMyServers(GHListMyServers()), .createServer(create),
                                           .getHistory(history), .sendMessage(send), .logout(GHLogout())] {
            let c = try ProbeClient(port: server.port)
            _ = c.send(body)
            let fs = frames(c)
            // Only the error and the close: nothing about any server, channel or user.
            if errors(fs) != [.unauthenticated] || fs.count != 2 || !c.ended {
                failures.append("\(body) before login got \(fs.count) frames: errors \(errors(fs)), closes \(closes(fs)), ended \(c.ended)")
            }
        }
        // A2: silence, a forged token, a second login.
        let silent = try ProbeClient(port: server.port)
        let started = Date()
        let silentFrames = frames(silent)
        let waited = Date().timeIntervalSince(started)
        if closes(silentFrames) != [.loginTimeout] || !silent.ended || waited > Double(deadline) / 1000 + 1 {
            failures.append("silence: \(closes(silentFrames)) after \(waited) s")
        }
        let forged = try ProbeClient(port: server.port)
        var login = GHLogin()
        login.token = AccessToken(user: "mallory", device: "x", expiry: UInt64(Date().timeIntervalSince1970) + 60).signed(with: Array("not-the-secret".utf8))
        _ = forged.send(.login(login))
        _ = forged.send(.login(login))
        let forgedFrames = frames(forged)
        if errors(forgedFrames) != [.unauthenticated] || closes(forgedFrames) != [.authFailed] || !forged.ended {
            failures.append("forged token: errors \(errors(forgedFrames)), closes \(closes(forgedFrames))")
        }
        let twice = try ProbeClient(port: server.port)
        guard twice.login(server.token("a2")) != nil else { throw BenchError("login failed") }
        login.token = server.token("a2")
        let second = twice.call(.login(login))
        let alive = twice.call(.heartbeat(GHHeartbeat()))
        if case .error(let e)? = second?.result, e.code == .conflict, case .pong? = alive?.result {} else {
            failures.append("second login: \(String(describing: second?.result)), then \(String(describing: alive?.result))")
        }
        return CheckOutcome(passed: failures.isEmpty,
                            figures: failures.isEmpty ? String(format: "6 kinds of request before login each got 401 and the close only; silence closed after %.2f s (deadline %d ms); forged token 401 + AUTH_FAILED; second login 409", waited, deadline)
                                : failures.joined(separator: "; "))
    }

    /// A6: 100 forged logins for one account within 10 s (2 s quick), each on its own
    /// connection, with the server's default limits. Pass: at most 5 are checked (401), the rest
    /// answered 429 with a retry time; then another account from the same address, and the
    /// guessed account's own valid token from another address, log in, and a wrong token for
    /// another account from a third address is checked (401, not 429).
    static func bruteForce(_ profile: ReliabilityProfile, _ seed: UInt64) throws -> CheckOutcome {
        let seconds = profile == .full ? 10.0 : 2.0
        let server = try ReliabilityServer(unlimited: false)
        defer { server.stop() }
        func forged(_ user: String) -> GHLogin {
            var login = GHLogin()
            login.token = AccessToken(user: user, device: "x", expiry: UInt64(Date().timeIntervalSince1970) + 60).signed(with: Array("guess".utf8))
            return login
        }
        var checked = 0, limited = 0, limitedWithoutRetry = 0, other: [String] = []
        let started = Date()
        for i in 0..<100 {
            let wait = started.addingTimeInterval(seconds * Double(i) / 100).timeIntervalSinceNow
            if wait > 0 { usleep(UInt32(wait * 1e6)) }  // paces the guesses over the period
            let c = try ProbeClient(port: server.port)
            switch c.call(.login(forged("victim")))?.result {
            case .error(let e)? where e.code == .unauthenticated: checked += 1
            case .error(let e)? where e.code == .rateLimited:
                limited += 1
                if e.retryAfterMs == 0 { limitedWithoutRetry += 1 }
            case let r: other.append(ProbeClient.text(r.map { var x = GHResponse(); x.result = $0; return x }))
            }
        }
        var problems: [String] = []
        if checked > 5 { problems.append("\(checked) guesses checked") }
        if limited + checked != 100 { problems.append("other answers: \(other.prefix(3))") }
        if limitedWithoutRetry > 0 { problems.append("\(limitedWithoutRetry) 429s without retry_after_ms") }
        let sameAddress = try ProbeClient(port: server.port)
        if sameAddress.login(server.token("alice")) == nil { problems.append("another account from the same address was refused") }
        let victimElsewhere = try ProbeClient(port: server.port, from: "127.0.0.2")
        let victimAnswer = ProbeClient.text(victimElsewhere.call(.login({ var l = GHLogin(); l.token = server.token("victim"); return l }())))
        let thirdAddress = try ProbeClient(port: server.port, from: "127.0.0.3")
        let thirdAnswer = ProbeClient.text(thirdAddress.call(.login(forged("bob"))))
        if !thirdAnswer.hasPrefix("error 401 ") { problems.append("a wrong token for another account from another address: \(thirdAnswer)") }
        let victimNote = victimAnswer.hasPrefix("ok ") ? "the guessed account's own token from another address logged in"
                                                       : "the guessed account's own token from another address: \(victimAnswer)"
        return CheckOutcome(passed: problems.isEmpty,
                            figures: String(format: "100 forged logins for one account in %.1f s: %d checked, %d answered 429 with retry_after; ", Date().timeIntervalSince(started), checked, limited)
                                + "another account from the same address logged in; \(victimNote); another account's wrong token from a third address checked (401)"
                                + (problems.isEmpty ? "" : "; " + problems.joined(separator: "; ")))
    }
}
