// Load and resources (RELIABILITY §3): R4, the server full.

import Foundation
import GuildhallWire

enum ResourceChecks {
    /// R4: max-connections 100, 150 clients. Pass: 100 served; 50 get SERVER_FULL and are closed within 100 ms.
    static func serverFull(_ profile: ReliabilityProfile, _ seed: UInt64) throws -> CheckOutcome {
        let cap = profile == .full ? 100 : 20, extra = cap / 2
        let server = try ReliabilityServer(["max-connections=\(cap)"])
        defer { server.stop() }
        var served: [ProbeClient] = []
        var full = 0, other = 0
        var slowest = 0.0
        for i in 0..<(cap + extra) {
            let started = Date()
            let c = try ProbeClient(port: server.port)
            if i < cap {
                guard c.login(server.token("r4-\(i)")) != nil else { other += 1; continue }
                served.append(c)
                continue
            }
            // Refused at accept, before any login: the close event, then the end.
            let (reasons, _) = c.readToEnd(until: Date().addingTimeInterval(5))
            if reasons == [.serverFull] && c.ended {
                full += 1
                slowest = max(slowest, Date().timeIntervalSince(started))
            } else {
                other += 1
            }
        }
        // Served sessions are still there.
        let alive = served.filter { $0.call(.heartbeat(GHHeartbeat()), timeout: 5) != nil }.count
        let passed = served.count == cap && alive == cap && full == extra && other == 0 && slowest < 0.1
        return CheckOutcome(passed: passed, figures: String(format: "cap %d: %d served (%d alive after), %d refused with SERVER_FULL, closed within %.1f ms at most, %d otherwise",
                                                            cap, served.count, alive, full, slowest * 1000, other))
    }
}
