// Durability and crashes (RELIABILITY §3): D2, a resend after a crash with the same client id.

import Foundation
import Glibc
import GuildhallWire

enum CrashChecks {
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
        var stored: [String] = [], after: UInt64 = 0
        while true {
            var history = GHGetHistory()
            history.channelID = channelID
            history.seq = after
            history.direction = .after
            history.limit = 100
            guard case .messages(let page)? = sender.call(.getHistory(history))?.result else { break }
            stored += page.messages.map(\.clientID)
            guard let last = page.messages.last?.seq, page.moreAvailable else { break }
            after = last
        }
        let distinct = Set(stored).count
        let passed = stored.count == count && distinct == count && changed == 0 && failedResends == 0
        return CheckOutcome(passed: passed,
                            figures: "\(count) sends, \(acked.count) acknowledged before kill -9; after the restart every resend answered (\(failedResends) failed), "
                                + "\(changed) acknowledged UIDs changed; stored \(stored.count) (\(distinct) distinct client ids)")
    }
}
