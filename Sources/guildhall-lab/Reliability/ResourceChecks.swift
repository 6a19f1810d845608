// Load and resources (docs/reliability.md): R4, the server full.

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

    /// R5: RLIMIT_NOFILE 128 (its connection cap follows: the limit less 64), 200 clients.
    /// Pass: no crash, no busy loop (under 20% of a core while held), the excess closed at once,
    /// and a new client served within 1 s once others leave.
    static func fileLimit(_ profile: ReliabilityProfile, _ seed: UInt64) throws -> CheckOutcome {
        let server = try ReliabilityServer(fileLimit: 128)
        defer { server.stop() }
        var served: [ProbeClient] = [], refused = 0, other = 0
        for i in 0..<200 {
            let c = try ProbeClient(port: server.port)
            if let _ = c.login(server.token("r5-\(i)")) { served.append(c); continue }
            let (reasons, _) = c.readToEnd(until: Date().addingTimeInterval(2))
            if reasons.contains(.serverFull) || c.ended { refused += 1 } else { other += 1 }
        }
        let cpuBefore = server.cpuSeconds, heldFrom = Date()
        Thread.sleep(forTimeInterval: profile == .full ? 10 : 2)
        let busy = (server.cpuSeconds - cpuBefore) / Date().timeIntervalSince(heldFrom)
        // Ten leave; a newcomer is served.
        served.removeLast(10)
        let leftAt = Date()
        var newcomer: Double?
        while newcomer == nil && Date().timeIntervalSince(leftAt) < 3 {
            let c = try ProbeClient(port: server.port)
            if c.login(server.token("r5-new")) != nil { newcomer = Date().timeIntervalSince(leftAt) } else { usleep(50_000) }
        }
        let alive = server.process.isRunning
        let passed = alive && !served.isEmpty && other == 0 && busy < 0.2 && (newcomer ?? .infinity) <= 1
        return CheckOutcome(passed: passed, figures: String(format: "%d served, %d refused at once, %d otherwise; %.1f%% of a core while held; a newcomer served %@ after ten left; server %@",
                                                            served.count + 10, refused, other, busy * 100,
                                                            newcomer.map { String(format: "%.2f s", $0) } ?? "never", alive ? "up" : "gone"))
    }
}
