// Durability and crashes (docs/reliability.md): D1, kill -9 while sends stream in,
// and D2, a resend after a crash with the same client id.

import Foundation
import GuildhallCore
import Glibc
import GuildhallStore
import GuildhallWire

enum CrashChecks {
    /// D1: sends with client ids stream into four channels (a window of 512 in flight) and the
    /// server is killed (-9) at a random moment, `runs` times. Every acknowledgement is logged.
    /// Pass, after each restart: each acknowledged client id stored exactly once, with its
    /// acknowledged seq; each channel's seqs strictly increasing; `PRAGMA integrity_check` ok;
    /// serving (a login answered) within 5 s of the kill.
    static func killDuringSends(_ profile: ReliabilityProfile, _ seed: UInt64) throws -> CheckOutcome {
        let runs = profile == .full ? 20 : 3
        var random = SeededRandom(seed: seed)
        let server = try ReliabilityServer()
        defer { server.stop() }
        var problems: [String] = [], ackedTotal = 0, sentTotal = 0, slowestRestart = 0.0, rates: [Double] = []
        for run in 0..<runs {
            let client = try ProbeClient(port: server.port)
            guard client.login(server.token("d1")) != nil else { throw BenchError("login failed (run \(run))") }
            var channels: [UInt64] = []
            for c in 0..<4 { channels.append(try client.createGuild("D1 \(run)", channel: "c\(c)").channel) }
            let killAfter = Double.random(in: 0.3...1.5, using: &random)
            // Stream until the kill; then read what the dead server had already sent.
            var pending: [UInt64: (clientID: String, channel: UInt64)] = [:]
            var acked: [String: (channel: UInt64, seq: UInt64)] = [:]
            var sent = 0, killedAt: Date?
            let started = Date()
            while true {
                if killedAt == nil {
                    while pending.count < 512 {
                        var send = GHSendMessage()
                        send.channelID = channels[sent % channels.count]
                        send.body.text = "d1 \(run) \(sent)"
                        send.clientID = "d1-\(seed)-\(run)-\(sent)"
                        pending[client.send(.sendMessage(send))] = (send.clientID, send.channelID)
                        sent += 1
                    }
                    if Date().timeIntervalSince(started) >= killAfter {
                        server.signal(SIGKILL)
                        killedAt = Date()
                    }
                }
                guard let f = client.next(until: Date().addingTimeInterval(killedAt == nil ? 0.05 : 5)) else {
                    if client.ended || killedAt != nil { break } else { continue }
                }
                if case .response(let r)? = f.kind, let p = pending.removeValue(forKey: r.id), case .message(let m)? = r.result {
                    if m.channelID != p.channel { problems.append("run \(run): \(p.clientID) acknowledged in channel \(m.channelID)") }
                    acked[p.clientID] = (p.channel, m.seq)
                }
            }
            guard let killedAt else { throw BenchError("the kill never happened") }
            rates.append(Double(acked.count) / killedAt.timeIntervalSince(started))
            ackedTotal += acked.count
            sentTotal += sent
            let integrity = (try? Store.integrityCheck(server.folder + "/guildhall.db")) ?? "could not open the database"
            if integrity != "ok" { problems.append("run \(run): integrity_check: \(integrity)") }
            try server.restart()
            let back = try ProbeClient(port: server.port)
            guard back.login(server.token("d1")) != nil else { throw BenchError("login after the restart failed (run \(run))") }
            let restart = Date().timeIntervalSince(killedAt)
            slowestRestart = max(slowestRestart, restart)
            if restart > 5 { problems.append("run \(run): serving again \(String(format: "%.1f", restart)) s after the kill") }
            for channel in channels {
                guard let stored = back.history(channel: channel) else { problems.append("run \(run): history refused"); continue }
                var seen: [String: UInt64] = [:], last: UInt64 = 0
                for m in stored {
                    if m.seq <= last { problems.append("run \(run): seq \(m.seq) after \(last) in channel \(channel)") }
                    last = m.seq
                    if seen.updateValue(m.seq, forKey: m.clientID) != nil { problems.append("run \(run): \(m.clientID) stored twice") }
                }
                for (id, a) in acked where a.channel == channel {
                    if seen[id] != a.seq { problems.append("run \(run): acknowledged \(id) (seq \(a.seq)) \(seen[id].map { "stored at seq \($0)" } ?? "lost")") }
                }
            }
        }
        let rate = rates.sorted()[rates.count / 2]
        return CheckOutcome(passed: problems.isEmpty,
                            figures: "\(runs) kills at random moments, \(sentTotal) sends, \(ackedTotal) acknowledged "
                                + String(format: "(median %.0f/s before the kill), serving again within %.2f s; ", rate, slowestRestart)
                                + (problems.isEmpty ? "every acknowledged id stored once with its seq, seqs increasing, integrity ok"
                                                    : "\(problems.count) problems: " + problems.prefix(5).joined(separator: "; ")))
    }

    /// D2: sends with client ids are streamed, the server is killed (-9) mid-stream and
    /// restarted, and every send is made again with its client id. Pass: each client id is
    /// stored once; every send acknowledged before the crash is answered again with its UID.
    static func resendAfterCrash(_ profile: ReliabilityProfile, _ seed: UInt64) throws -> CheckOutcome {
        let count = profile == .full ? 2000 : 300
        let server = try ReliabilityServer()
        defer { server.stop() }
        var sender = try ProbeClient(port: server.port)
        guard sender.login(server.token("d2")) != nil else { throw BenchError("login failed") }
        let (_, channelID) = try sender.createGuild("D2", channel: "stream")
        // Pipelined: all sends written, answers read as they come; the kill lands after a third is answered.
        var acked: [String: UInt64] = [:], ids: [UInt64: String] = [:]
        for i in 0..<count {
            var send = GHSendMessage()
            send.channelID = channelID
            send.body.text = "d2 \(i)"
            send.clientID = "d2-\(seed)-\(i)"
            ids[sender.send(.sendMessage(send))] = send.clientID
        }
        while acked.count < count / 3, let f = sender.next(until: Date().addingTimeInterval(20)) {
            if case .response(let r)? = f.kind, case .message(let m)? = r.result, let cid = ids[r.id] { acked[cid] = m.uid }
        }
        try server.crashAndRestart()
        sender = try ProbeClient(port: server.port)
        guard sender.login(server.token("d2")) != nil else { throw BenchError("login after the restart failed") }
        var changed = 0, failedResends = 0
        for i in 0..<count {
            var send = GHSendMessage()
            send.channelID = channelID
            send.body.text = "d2 \(i)"
            send.clientID = "d2-\(seed)-\(i)"
            guard case .message(let m)? = sender.call(.sendMessage(send))?.result else { failedResends += 1; continue }
            if let before = acked[send.clientID], before != m.uid { changed += 1 }
        }
        // What is stored: every client id once.
        let stored = (sender.history(channel: channelID) ?? []).map(\.clientID)
        let distinct = Set(stored).count
        let passed = stored.count == count && distinct == count && changed == 0 && failedResends == 0
        return CheckOutcome(passed: passed,
                            figures: "\(count) sends, \(acked.count) acknowledged before kill -9; after the restart every resend answered (\(failedResends) failed), "
                                + "\(changed) acknowledged UIDs changed; stored \(stored.count) (\(distinct) distinct client ids)")
    }
}
