// Liveness (docs/reliability.md): L1 a silent client, L2 resume, L3 a reconnect storm.

import Foundation
import GuildhallCore
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
        // Every event's seq counts, not only the messages': the reader's own join may reach its
        // session after "before" (another loop's fan-out), and is then replayed too.
        var replayed: [UInt64] = [], seqs: [UInt64] = [], resumedWith: UInt32?, answer: GHLoginResult?
        let by = Date().addingTimeInterval(20)
        while resumedWith == nil, let f = reader.next(until: by) {
            if case .response(let r)? = f.kind, r.id == id, case .login(let l)? = r.result { answer = l }
            if f.event.seq != 0 { seqs.append(f.event.seq) }  // RESUMED is an event too
            if case .message(let m)? = f.event.body { replayed.append(m.uid) }
            if case .resumed(let r)? = f.event.body { resumedWith = r.replayed }
        }
        let replayedEvents = seqs.count - (resumedWith == nil ? 0 : 1)
        // The owner's send is answered before its fan-out reaches the reader's session (on another
        // loop, it may be a turn later): a message not yet in the session when the resume is
        // answered was not missed, and comes live after RESUMED. Together they must be exactly `sent`.
        var live: [UInt64] = []
        while replayed.count + live.count < sent.count, let f = reader.next(until: by) {
            if f.event.seq != 0 { seqs.append(f.event.seq) }
            if case .message(let m)? = f.event.body { live.append(m.uid) }
        }
        if answer?.resumed != true { failures.append("not resumed: \(answer?.resumeFailure ?? "no answer")") }
        if replayed + live != sent { failures.append("replayed \(replayed.count) and \(live.count) live of \(sent.count), in order \(replayed + live == sent)") }
        if seqs != (0..<seqs.count).map({ seen + 1 + UInt64($0) }) { failures.append("event seqs not contiguous from \(seen + 1): \(seqs.suffix(4))") }
        if resumedWith.map(Int.init) != replayedEvents { failures.append("resumed said \(String(describing: resumedWith)), \(replayedEvents) replayed") }
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
                            figures: failures.isEmpty ? "\(sent.count) messages missed: \(replayed.count) replayed once, in order (\(replayedEvents) events), then resumed, \(live.count) live after it (its fan-out came after the resume); seqs \(seen + 1)...\(seqs.last ?? 0) without a gap; a stale seq fell back to a login (\(fallback?.resumeFailure.prefix(60) ?? ""))"
                                : failures.joined(separator: "; "))
    }

    /// L3: `count` clients (10 000 full, 1000 quick) logged in, with the server's default limits
    /// (its connection cap raised to fit them). Every connection is reset at once, and each
    /// client reconnects as the SDK does: after a random wait (jitter), again on failure with
    /// the wait doubling from 100 ms to 5 s. Meanwhile one account is guessed at 50 times.
    /// Pass: every client logged in again within 60 s; at most 5 of the guesses checked (401),
    /// the rest 429.
    static func reconnectStorm(_ profile: ReliabilityProfile, _ seed: UInt64) throws -> CheckOutcome {
        let count = profile == .full ? 10_000 : 1_000
        var random = SeededRandom(seed: seed)
        let server = try ReliabilityServer(["max-connections=\(count * 2)"], unlimited: false)
        defer { server.stop() }
        let fleet = ConnectionFleet(port: server.port)
        defer { fleet.finish() }
        let hello = (0..<count).map { ConnectionFleet.login(server.token("l3-\($0)")) }
        let members = fleet.open(count, perSecond: 1000) { hello[$0] }
        guard fleet.run(for: 60, until: { members.allSatisfy { $0.loggedIn || $0.ended } }), members.allSatisfy(\.loggedIn) else {
            throw BenchError("\(members.filter(\.loggedIn).count) of \(count) logged in before the storm")
        }
        // The storm: every connection reset at once; each comes back after its jitter.
        fleet.abortAll()
        let started = BenchRecord.monotonicNanos()
        fleet.openRate = 1_000_000
        var waits: [ObjectIdentifier: Int] = [:]
        for m in members {
            fleet.reopen(m, hello: hello[m.index], afterMillis: Int.random(in: 0...1000, using: &random))
            waits[ObjectIdentifier(m)] = 100
        }
        var forged = GHLogin()
        forged.token = AccessToken(user: "l3-guessed", device: "x", expiry: UInt64(Date().timeIntervalSince1970) + 60).signed(with: Array("guess".utf8))
        var guess = GHFrame()
        guess.request.id = 1
        guess.request.login = forged
        let guesses = fleet.open(50, perSecond: 1_000_000) { _ in FrameEncoding.framed(guess) }
        fleet.openRate = 1_000_000
        var retries = 0
        let done = fleet.run(for: 60) {
            for m in members where m.ended && !m.loggedIn && !m.queued {
                // Failed (refused, reset, full): back off, doubling to 5 s, with jitter.
                let wait = waits[ObjectIdentifier(m)]!
                fleet.reopen(m, hello: hello[m.index], afterMillis: wait + Int.random(in: 0...(wait / 4 + 1), using: &random))
                waits[ObjectIdentifier(m)] = min(wait * 2, 5000)
                retries += 1
            }
            return members.allSatisfy(\.loggedIn) && guesses.allSatisfy { !$0.errors.isEmpty }
        }
        let seconds = Double(BenchRecord.monotonicNanos() - started) / 1e9
        let back = members.filter(\.loggedIn).count
        let checked = guesses.filter { $0.errors.first?.code == .unauthenticated }.count
        let limited = guesses.filter { $0.errors.first?.code == .rateLimited }.count
        let passed = done && back == count && checked <= 5 && checked + limited == guesses.count
        return CheckOutcome(passed: passed,
                            figures: String(format: "%d clients reset at once: %d logged in again within %.1f s (%d retries after a refusal or reset); "
                                            + "50 guesses at one account meanwhile: %d checked, %d answered 429",
                                            count, back, seconds, retries, checked, limited))
    }
}
