// Load (docs/reliability.md): R1, thousands of idle authenticated connections held
// with heartbeats; R2, messages at a steady rate into many channels of many
// subscribers; R3, the same at half the rate for an hour. The server's
// memory, CPU and descriptors are watched meanwhile.

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

    /// R2: 10 000 messages/s of 200 B into 100 channels of 100 subscribers (one publisher each)
    /// for 5 min (quick: 1000/s into 10 channels of 10 for 10 s). Pass: none lost or duplicated,
    /// each publisher's order kept; p99 end to end under 100 ms; CPU and resident memory steady
    /// (second half: each 10 s window's CPU within 25% of their median, memory within 5%).
    static func throughput(_ profile: ReliabilityProfile, _ seed: UInt64) throws -> CheckOutcome {
        let full = profile == .full
        return try steadyLoad(channels: full ? 100 : 10, perChannel: full ? 100 : 10, rate: (full ? 10_000 : 1000) * ratePercent / 100,
                              seconds: full ? 300 : 10, window: full ? 10 : 2)
    }

    /// `--rate-percent`: R2's and R3's rates scaled (set once before any check runs; the runner is one thread).
    nonisolated(unsafe) static var ratePercent = 100

    /// R3: R2 at half the rate for an hour (full profile only). Pass: none lost or reordered,
    /// resident memory's slope under 1 MiB per 10 min (after the first 10 min), descriptors
    /// at the end as at the start. (Its latency is a figure: docs/reliability.md holds R3 to memory and
    /// descriptors, and R2 to the p99.)
    static func soak(_ profile: ReliabilityProfile, _ seed: UInt64) throws -> CheckOutcome {
        guard profile == .full else { return CheckOutcome(passed: true, figures: "full profile only (an hour)") }
        return try steadyLoad(channels: 100, perChannel: 100, rate: 5_000 * ratePercent / 100, seconds: 3600, window: 60, soak: true)
    }

    private static func steadyLoad(channels: Int, perChannel: Int, rate: Int, seconds: Int, window: Int, soak: Bool = false) throws -> CheckOutcome {
        let subscribers = channels * perChannel
        let server = try GeneratedLoad.server(subscribers: subscribers, publishers: channels, channels: channels)
        defer { server.stop() }
        var shape = GeneratedLoad.shape(subscribers: subscribers, publishers: channels, channels: channels, rate: rate, seconds: seconds, bytes: 200)
        shape.drainTimeout = 30
        // Samples each second once publishing started: (seconds in, resident bytes, CPU seconds, descriptors).
        var samples: [(at: Double, rss: Int, cpu: Double, files: Int)] = []
        var started: Date?
        let result = GeneratedLoad.run(shape, on: server) { (publishing: Bool) in
            // Samples count from when publishing starts: every connection is open and ready.
            guard publishing else { return }
            let now = Date()
            if started == nil { started = now }
            let at = now.timeIntervalSince(started!)
            if samples.last.map({ at - $0.at >= 1 }) ?? true { samples.append((at, server.residentBytes, server.cpuSeconds, server.openFiles)) }
        }
        let measured = samples.filter { $0.at <= Double(seconds) }
        guard measured.count >= 4 else { throw BenchError("too few samples (\(measured.count))") }
        // Per window: CPU used (a core's fraction) and the resident memory at its end.
        var windows: [(cpu: Double, rss: Int)] = []
        var from = measured[0]
        for s in measured.dropFirst() where s.at - from.at >= Double(window) {
            windows.append(((s.cpu - from.cpu) / (s.at - from.at), s.rss))
            from = s
        }
        let late = Array(windows.dropFirst(windows.count / 2))
        func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
        let cpuMedian = median(late.map(\.cpu)), rssMedian = median(late.map { Double($0.rss) })
        let cpuSteady = late.allSatisfy { abs($0.cpu - cpuMedian) <= 0.25 * cpuMedian }
        let rssSteady = late.allSatisfy { abs(Double($0.rss) - rssMedian) <= 0.05 * rssMedian }
        let p99 = Double(result.latency.quantile(0.99)) / 1e6
        let clean = result.failure == nil && result.lost == 0 && result.outOfOrder == 0 && result.deliveries == result.expected
        var passed = clean && (soak || p99 < 100)
        var figures = String(format: "%d msg/s of 200 B into %d channels x %d subscribers for %d s: %llu of %llu delivered, %llu lost, %llu out of order or doubled; "
                             + "p50 %.1f ms, p99 %.1f ms, max %.1f ms; server CPU %.2f cores (median of the second half's %d s windows)",
                             rate, channels, perChannel, seconds, result.deliveries, result.expected, result.lost, result.outOfOrder,
                             Double(result.latency.quantile(0.5)) / 1e6, p99, Double(result.latency.max) / 1e6, cpuMedian, window)
        if let failure = result.failure { figures += "; \(failure)" }
        if soak {
            // Memory's slope after the first 10 minutes, by least squares, in MiB per 10 minutes; descriptors first and last.
            let settled = measured.filter { $0.at >= 600 }
            let n = Double(settled.count), mx = settled.map(\.at).reduce(0, +) / n, my = settled.map { Double($0.rss) }.reduce(0, +) / n
            let slope = settled.map { ($0.at - mx) * (Double($0.rss) - my) }.reduce(0, +) / settled.map { ($0.at - mx) * ($0.at - mx) }.reduce(0, +)
            let perTen = slope * 600 / 1048576
            let filesGrew = (measured.last?.files ?? 0) > measured[0].files
            passed = passed && perTen < 1 && !filesGrew
            figures += String(format: "; resident %.1f -> %.1f MiB, slope %.2f MiB per 10 min after the first 10; descriptors %d -> %d",
                              Double(measured[0].rss) / 1048576, Double(measured.last!.rss) / 1048576, perTen, measured[0].files, measured.last!.files)
        } else {
            passed = passed && cpuSteady && rssSteady
            figures += String(format: " %@; resident %@ (%.1f MiB median)", cpuSteady ? "steady" : "NOT steady", rssSteady ? "steady" : "NOT steady", rssMedian / 1048576)
        }
        return CheckOutcome(passed: passed, figures: figures)
    }
}
