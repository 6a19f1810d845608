// Liveness (RELIABILITY §3): L1, a silent client.

import Foundation
import GuildhallWire

enum LivenessChecks {
    /// L1: a client that logs in and then sends nothing is closed with HEARTBEAT_TIMEOUT within 2 × the interval + 1 s.
    static func silentClient(_ profile: ReliabilityProfile, _ seed: UInt64) throws -> CheckOutcome {
        // The full profile runs the defaults (30 s heartbeats, idle timeout 60 s: two heartbeats);
        // the quick one the same rule on a 500 ms heartbeat.
        let interval = profile == .full ? 30_000 : 500
        var settings = ["resume-window-ms=0"]
        if profile == .quick { settings += ["heartbeat-interval-ms=\(interval)", "idle-timeout-ms=\(2 * interval)"] }
        let server = try ReliabilityServer(settings)
        defer { server.stop() }
        let bound = 2 * Double(interval) / 1000 + 1
        // Each client's silence counts from its login's answer.
        let clients = try (0..<(profile == .full ? 100 : 10)).map { i -> (ProbeClient, Date) in
            let c = try ProbeClient(port: server.port)
            guard c.login(server.token("l1-\(i)")) != nil else { throw BenchError("login failed") }
            return (c, Date())
        }
        var latest = 0.0, wrong = 0
        for (c, since) in clients {
            // Read without a timeout of the client's own: one frame at a time, its end noted when it comes.
            var reasons: [GHCloseReason] = []
            while let f = c.next(until: since.addingTimeInterval(bound + 10)) {
                if case .closed(let r)? = f.event.body { reasons.append(r.reason) }
            }
            let closedAfter = Date().timeIntervalSince(since)
            if reasons.last == .heartbeatTimeout && c.ended { latest = max(latest, closedAfter) } else { wrong += 1 }
        }
        return CheckOutcome(passed: wrong == 0 && latest <= bound,
                            figures: String(format: "%d silent clients, heartbeat %d ms: closed with HEARTBEAT_TIMEOUT after %.2f s at most (bound %.1f s), %d otherwise",
                                            clients.count, interval, latest, bound, wrong))
    }

    /// L2: drop the socket, resume on a new one with the last seq: exactly the missed events, in
    /// order, then `resumed`; a resume from a seq the server no longer holds falls back to a login.
    static func resume(_ profile: ReliabilityProfile, _ seed: UInt64) throws -> CheckOutcome {
        let missedCount = profile == .full ? 1000 : 100
        let server = try ReliabilityServer(["resume-events=\(missedCount * 2)"])
        defer { server.stop() }
        let owner = try ProbeClient(port: server.port)
        guard owner.login(server.token("l2-owner")) != nil else { throw BenchError("login failed") }
        let (serverID, channelID) = try owner.createGuild("L2", channel: "general")
        var reader = try ProbeClient(port: server.port)
        guard let login = reader.login(server.token("l2-reader")) else { throw BenchError("login failed") }
        reader.joinAndSubscribe(server: serverID, channel: channelID)
        var send = GHSendMessage()
        send.channelID = channelID
        send.body.text = "before"
        owner.call(.sendMessage(send))
        while let f = reader.next(until: Date().addingTimeInterval(10)), f.event.message.body.text != "before" {}
        let seen = reader.lastEventSeq
        reader = try ProbeClient(port: server.port)  // the old socket closes: the session waits for its resume
        var sent: [UInt64] = []
        for i in 0..<missedCount {
            send.body.text = "missed \(i)"
            if case .message(let m)? = owner.call(.sendMessage(send))?.result { sent.append(m.uid) }
        }
        var resume = GHResume()
        resume.token = server.token("l2-reader")
        resume.sessionID = login.sessionID
        resume.lastEventSeq = seen
        var failures: [String] = []
        let id = reader.send(.resume(resume))
        var replayed: [UInt64] = [], seqs: [UInt64] = [], resumedWith: UInt32?, answer: GHLoginResult?
        let by = Date().addingTimeInterval(20)
        while resumedWith == nil, let f = reader.next(until: by) {
            if case .response(let r)? = f.kind, r.id == id, case .login(let l)? = r.result { answer = l }
            if case .message(let m)? = f.event.body { replayed.append(m.uid); seqs.append(f.event.seq) }
            if case .resumed(let r)? = f.event.body { resumedWith = r.replayed }
        }
        if answer?.resumed != true { failures.append("not resumed: \(answer?.resumeFailure ?? "no answer")") }
        if replayed != sent { failures.append("replayed \(replayed.count) of \(sent.count), in order \(replayed == sent)") }
        if seqs != (0..<seqs.count).map({ seen + 1 + UInt64($0) }) { failures.append("event seqs not contiguous from \(seen + 1)") }
        if resumedWith.map(Int.init) != sent.count { failures.append("resumed said \(String(describing: resumedWith))") }
        // A seq the server no longer holds (acknowledged by the resume above): a fresh login, never an error.
        let stale = try ProbeClient(port: server.port)
        resume.lastEventSeq = 1
        resume.sessionID = answer?.sessionID ?? login.sessionID
        let staleID = stale.send(.resume(resume))
        var fallback: GHLoginResult?
        while fallback == nil, let f = stale.next(until: Date().addingTimeInterval(10)) {
            if case .response(let r)? = f.kind, r.id == staleID, case .login(let l)? = r.result { fallback = l }
        }
        if fallback?.resumed != false || fallback?.resumeFailure.isEmpty != false { failures.append("stale resume: \(String(describing: fallback))") }
        return CheckOutcome(passed: failures.isEmpty,
                            figures: failures.isEmpty ? "\(sent.count) events missed: all replayed once, in order, seqs \(seen + 1)...\(seen + UInt64(sent.count)), then resumed; a stale seq fell back to a login (\(fallback?.resumeFailure.prefix(60) ?? ""))"
                                : failures.joined(separator: "; "))
    }
}
