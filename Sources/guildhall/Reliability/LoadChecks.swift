// Load (RELIABILITY §3): R1, thousands of idle authenticated connections held
// with heartbeats, the server's memory and descriptors watched meanwhile.

import Foundation
import GuildhallWire

enum LoadChecks {
    /// R1: `count` connections (10 000 full, 1000 quick) opened at 1000/s, each logged in, held
    /// (10 min full, 20 s quick) with a heartbeat from each every 30 s (2 s quick). Pass: no
    /// connection closed; resident memory grown by at most 25 KiB per connection over the
    /// baseline and flat (each sample within 5% of the median) over the second half; the open
    /// descriptors constant while held; heartbeat round trip p99 under 50 ms.
    static func idleConnections(_ profile: ReliabilityProfile, _ seed: UInt64) throws -> CheckOutcome {
        let full = profile == .full
        let count = full ? 10_000 : 1_000, hold = full ? 600.0 : 20.0, interval = full ? 30.0 : 2.0
        let server = try ReliabilityServer()
        defer { server.stop() }
        let fleet = ConnectionFleet(port: server.port)
        defer { fleet.finish() }
        let baseline = server.residentBytes
        let started = Date()
        let members = fleet.open(count, perSecond: 1000) { ConnectionFleet.login(server.token("r1-\($0)")) }
        guard fleet.run(for: 60, until: { members.allSatisfy { $0.loggedIn || $0.ended } }), members.allSatisfy(\.loggedIn) else {
            throw BenchError("\(members.filter(\.loggedIn).count) of \(count) logged in within 60 s")
        }
        let opened = Date().timeIntervalSince(started)
        // Hold: each member's heartbeat at its own offset in the interval; a sample each second.
        var rss: [(Double, Int)] = [], files: [Int] = []
        let holdStart = Date()
        var next = 0
        while Date().timeIntervalSince(holdStart) < hold {
            let due = Int(Date().timeIntervalSince(holdStart) / interval * Double(count)) + 1
            while next < due {
                fleet.heartbeat(members[next % count])
                next += 1
            }
            fleet.run(for: 1.0 / 20)
            if rss.last.map({ Date().timeIntervalSince(holdStart) - $0.0 >= 1 }) ?? true {
                rss.append((Date().timeIntervalSince(holdStart), server.residentBytes))
                files.append(server.openFiles)
            }
        }
        fleet.run(for: 1, until: { members.allSatisfy { $0.pingSentAt == 0 } })
        let closed = members.filter(\.ended).count
        let secondHalf = rss.filter { $0.0 >= hold / 2 }.map(\.1).sorted()
        let median = secondHalf[secondHalf.count / 2]
        let flat = secondHalf.allSatisfy { abs(Double($0 - median)) <= 0.05 * Double(median) }
        let peak = rss.map(\.1).max() ?? 0
        let perConnection = Double(peak - baseline) / Double(count)
        let p99 = Double(fleet.roundTrips.quantile(0.99)) / 1e6
        let filesConstant = files.min() == files.max()
        let passed = closed == 0 && perConnection <= 25 * 1024 && peak - baseline <= 256 << 20 && flat && filesConstant && p99 < 50
        return CheckOutcome(passed: passed,
                            figures: String(format: "%d connections logged in within %.1f s, held %.0f s: %d closed; resident %.1f -> %.1f MiB (%.1f KiB per connection), "
                                            + "second half %@ (%.1f-%.1f MiB); descriptors %@ (%d-%d); %llu heartbeats, round trip p50 %.2f ms, p99 %.2f ms",
                                            count, opened, hold, closed, Double(baseline) / 1048576, Double(peak) / 1048576, perConnection / 1024,
                                            flat ? "flat" : "NOT flat", Double(secondHalf.first ?? 0) / 1048576, Double(secondHalf.last ?? 0) / 1048576,
                                            filesConstant ? "constant" : "CHANGED", files.min() ?? 0, files.max() ?? 0,
                                            fleet.roundTrips.count, Double(fleet.roundTrips.quantile(0.5)) / 1e6, p99))
    }
}
