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
}
