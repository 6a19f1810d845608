// Authentication (RELIABILITY §3): A1 and A2, what a connection gets before and around its login.

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
}
