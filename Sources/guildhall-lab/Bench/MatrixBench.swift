// `guildhall-lab bench matrix` (what `make bench` runs): the standard shapes of
// the performance targets, each against Guildhall, redis-server and
// nats-server in one run (alternating, `--runs` each), printed as one table
// with the ratio to the target. The targets are docs/performance.md's (the
// shared yardstick's), less what this matrix cannot run: C's second part,
// ≥ 1.0× nats-js, needs JetStream, which only the yardstick starts.
//
// Scoring rules: a run that failed or has no samples does not score; a
// target whose reference did not score is "not measured", never met. The
// throughput shapes run twice, with an acknowledgement window of 256 and
// without one (publishers paced only by TCP, as redis-benchmark and nats
// bench drive servers); the target counts on the slower. Latency shapes
// report the median over runs of each run's p99. Every row reports
// Guildhall's lost and out-of-order deliveries over all its runs.

import ArgumentParser
import Foundation

struct MatrixBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "matrix", abstract: "The standard benchmark matrix, as one table.")

    @Option(help: "Runs per shape and target (alternating); medians are reported.") var runs = 3
    @Option(help: "Scale message counts (0.1 for a quick look).") var scale = 1.0
    @Flag(help: "Print the rows as JSON instead of a table.") var json = false

    struct Row: Encodable {
        let shape: String
        let measure: String
        let ours: String
        let others: String
        let target: String
        var met: Bool
        /// Guildhall against the target's reference (throughput: above 1 is better; latency: below 1); nil when not measured.
        var ratio: Double? = nil
        /// Guildhall's lost and out-of-order deliveries over all runs.
        var lost: UInt64 = 0
        var outOfOrder: UInt64 = 0
        /// Cores Guildhall's process used, and its peak RSS in MiB (median run), where measured.
        var serverCores: Double? = nil
        var peakRSSMiB: Double? = nil
        /// redis's peak RSS in MiB (median run), beside Guildhall's.
        var redisPeakRSSMiB: Double? = nil
    }

    static let peers: [BenchTargetKind] = [.redis, .nats]

    func run() throws {
        var rows: [Row] = []
        func n(_ x: Int) -> Int { max(1, Int(Double(x) * scale)) }

        var a = LoadShape()
        a.subscribers = 1000; a.publishers = 1; a.bytes = 100; a.messages = n(4000)
        rows += try throughput("A: 1000 subs, 1 pub, 100 B, max rate", a, factor: 1.0)
        var b = LoadShape()
        b.subscribers = 100; b.publishers = 1; b.bytes = 100; b.messages = n(20_000)
        rows += try throughput("B: 100 subs, 1 pub, max rate", b, factor: 1.0)
        var c = LoadShape()
        c.subscribers = 10; c.publishers = 10; c.messages = n(20_000)
        rows += try throughput("C: 10 subs, 10 pubs, max rate", c, factor: 0.5)

        var d = LoadShape()
        d.subscribers = 1000; d.publishers = 1; d.rate = 1000; d.messages = n(5000); d.window = 100_000
        rows.append(try latency("D: 1000 subs at 1000 msg/s", d, members: 0, factor: 1.0, against: [.redis]))
        var f = LoadShape()
        f.subscribers = 1; f.publishers = 1; f.rate = 1000; f.messages = n(5000); f.window = 100_000
        // Through a subscription: a server far above the small-server threshold (10 in the bench).
        rows.append(try latency("F: 1 sub at 1000 msg/s, through a subscription", f, members: 1000, factor: 1.0, against: Self.peers))

        rows.append(try idleSessions(n(10_000)))
        rows.append(try store(n(2000)))
        rows.append(try sink(n(2_500_000)))

        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let rowsJSON = String(decoding: try encoder.encode(rows), as: UTF8.self)
            print("{\"bench\":\"matrix\",\"runs\":\(runs),\"rows\":\(rowsJSON)}")
            return
        }
        print("| shape | measure | Guildhall | others | target | met | lost / out of order | server cores | peak RSS |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in rows {
            let cores = r.serverCores.map { String(format: "%.2f", $0) } ?? "-"
            let rss = r.peakRSSMiB.map { String(format: "%.0f MiB", $0) + (r.redisPeakRSSMiB.map { String(format: " (redis %.0f)", $0) } ?? "") } ?? "-"
            print("| \(r.shape) | \(r.measure) | \(r.ours) | \(r.others) | \(r.target) | \(r.met ? "yes" : "no") | \(r.lost) / \(r.outOfOrder) | \(cores) | \(rss) |")
        }
    }

    // MARK: Shapes

    /// Runs `shape` `runs` times against each target, alternating.
    private func measure(_ shape: LoadShape, members: Int = 0) throws -> [BenchTargetKind: [BenchRun]] {
        var all: [BenchTargetKind: [BenchRun]] = [:]
        for _ in 0..<runs {
            for t in [BenchTargetKind.guildhall] + Self.peers {
                all[t, default: []].append(try BenchRunner.run(t, shape: shape, members: members))
            }
        }
        return all
    }

    /// Runs that count: no failure, and deliveries (and, for latency, samples) seen.
    private static func scoring(_ runs: [BenchRun]?, latency: Bool = false) -> [BenchRun] {
        (runs ?? []).filter { $0.result.failure == nil && $0.result.deliveries > 0 && (!latency || $0.result.latency.count > 0) }
    }

    private static func median<T: Comparable>(_ values: [T]) -> T? { values.isEmpty ? nil : values.sorted()[values.count / 2] }

    private static func mps(_ d: Double?) -> String { d.map { String(format: "%.2f M/s", $0 / 1e6) } ?? "failed" }

    private static func guildhallFigures(_ runs: [BenchTargetKind: [BenchRun]], into row: inout Row) {
        row.redisPeakRSSMiB = median(scoring(runs[.redis]).map { Double($0.serverPeakRSS) / 1_048_576 })
        let all = runs[.guildhall] ?? []
        row.lost = all.reduce(0) { $0 + $1.result.lost }
        row.outOfOrder = all.reduce(0) { $0 + $1.result.outOfOrder }
        let scored = scoring(all)
        row.serverCores = median(scored.map(\.serverCores))
        row.peakRSSMiB = median(scored.map { Double($0.serverPeakRSS) / 1_048_576 })
    }

    /// One row per acknowledgement variant; the target counts on the slower.
    private func throughput(_ name: String, _ base: LoadShape, factor: Double) throws -> [Row] {
        var rows: [Row] = []
        var worst: Double?
        var measured = true
        for (label, window) in [("window 256", 256), ("no window", Int.max / 2)] {
            var shape = base
            shape.window = window
            let all = try measure(shape)
            let rate: (BenchTargetKind) -> Double? = { Self.median(Self.scoring(all[$0]).map(\.result.deliveriesPerSecond)) }
            let ours = rate(.guildhall)
            let best = Self.peers.compactMap(rate).max()
            let ratio = best.map { (ours ?? 0) / $0 }
            if let ratio { worst = min(worst ?? ratio, ratio) } else { measured = false }
            var row = Row(shape: "\(name) (\(label))", measure: "deliveries/s", ours: Self.mps(ours),
                          others: Self.peers.map { "\($0.rawValue) \(Self.mps(rate($0)))" }.joined(separator: ", "),
                          target: ratio.map { String(format: "≥ %.1f× best (%.2f×)", factor, $0) } ?? "not measured",
                          met: false, ratio: ratio)
            Self.guildhallFigures(all, into: &row)
            rows.append(row)
        }
        let met = measured && (worst ?? 0) >= factor
        for i in rows.indices { rows[i].met = met }
        return rows
    }

    /// p99 as the median of each scoring run's p99; the reference is the best of `against`.
    private func latency(_ name: String, _ shape: LoadShape, members: Int, factor: Double, against: [BenchTargetKind]) throws -> Row {
        let all = try measure(shape, members: members)
        let p99: (BenchTargetKind) -> UInt64? = { Self.median(Self.scoring(all[$0], latency: true).map { $0.result.latency.quantile(0.99) }) }
        let ours = p99(.guildhall)
        let reference = against.compactMap(p99).min()
        let ratio = reference.map { Double(ours ?? .max) / Double(max($0, 1)) }
        let lag = Self.median(Self.scoring(all[.guildhall], latency: true).map { $0.result.scheduleLag.quantile(0.99) })
        let who = against.count == 1 ? against[0].rawValue : "best"
        var row = Row(shape: name, measure: "p99", ours: ours.map(BenchRunner.micros) ?? "failed",
                      others: Self.peers.map { "\($0.rawValue) \(p99($0).map(BenchRunner.micros) ?? "failed")" }.joined(separator: ", ")
                          + " (generator's own lag p99 \(lag.map(BenchRunner.micros) ?? "-"))",
                      target: ratio.map { String(format: "≤ %.1f× %@ (%.2f×)", factor, who, $0) } ?? "not measured",
                      met: ours != nil && ratio.map { $0 <= factor } == true, ratio: ratio)
        Self.guildhallFigures(all, into: &row)
        return row
    }

    private func idleSessions(_ sessions: Int) throws -> Row {
        var idle = LoadShape()
        idle.subscribers = 0; idle.publishers = sessions; idle.messages = 0
        let server = try BenchTargets.start(.guildhall, members: sessions + 1, subscribers: 0, publishers: sessions)
        let before = server.residentBytes
        var after = 0
        let gen = LoadGenerator(wire: server.wire, shape: idle, port: server.port)
        gen.onReady = { after = server.residentBytes }
        let ri = gen.run()
        server.stop()
        let perSession = Double(after - before) / Double(sessions)
        return Row(shape: "\(sessions) idle authenticated sessions", measure: "RSS/session",
                   ours: ri.failure == nil ? String(format: "%.1f KiB", perSession / 1024) : "failed",
                   others: String(format: "%.0f logins/s", Double(sessions) / max(ri.connectSeconds, 1e-9)),
                   target: "≤ 4 KiB", met: ri.failure == nil && perSession <= 4 * 1024, ratio: perSession / 4096)
    }

    /// `bench store --publishers 100`'s target (docs/performance.md).
    static let storeTarget = 250_000.0

    private func store(_ messages: Int) throws -> Row {
        var st = LoadShape()
        st.subscribers = 0; st.publishers = 100; st.messages = messages; st.window = 64
        let rs = try BenchRunner.run(.guildhall, shape: st)
        let acked = Double(rs.result.published) / max(rs.result.seconds, 1e-9)
        return Row(shape: "store: 100 pipelining publishers", measure: "acked sends/s",
                   ours: rs.result.failure == nil ? String(format: "%.0f", acked) : "failed",
                   others: "-", target: "≥ 250,000", met: rs.result.failure == nil && acked >= Self.storeTarget,
                   ratio: acked / Self.storeTarget)
    }

    /// The load generator against a sink that only writes: it must not be the bottleneck, and its own CPU shows it.
    private func sink(_ records: Int) throws -> Row {
        var sink = LoadShape()
        sink.subscribers = 4; sink.publishers = 0; sink.sinkRecords = records; sink.measureRecords = false
        let rk = try BenchRunner.run(.sink, shape: sink)
        let cores = rk.result.seconds > 0 ? rk.result.generatorCPUSeconds / rk.result.seconds : 0
        return Row(shape: "load generator vs trivial sink", measure: "frames/s",
                   ours: rk.result.failure == nil ? Self.mps(rk.result.deliveriesPerSecond) : "failed",
                   others: String(format: "generator CPU %.2f cores", cores), target: "≥ 5 M/s",
                   met: rk.result.failure == nil && rk.result.deliveriesPerSecond >= 5e6, ratio: rk.result.deliveriesPerSecond / 5e6)
    }
}
