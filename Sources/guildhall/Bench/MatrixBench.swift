// `guildhall bench matrix` (what `make bench` runs): the standard shapes of
// the performance targets, each against Guildhall, redis-server and
// nats-server in one run, printed as one table with the ratio to the target.

import ArgumentParser
import Foundation

struct MatrixBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "matrix", abstract: "The standard benchmark matrix, as one table.")

    @Option(help: "Runs per shape and target (alternating); medians are reported.") var runs = 1
    @Option(help: "Scale message counts (0.1 for a quick look).") var scale = 1.0
    @Flag(help: "Print the rows as JSON instead of a table.") var json = false

    struct Row: Encodable {
        let shape: String
        let measure: String
        let ours: String
        let others: String
        let target: String
        let met: Bool
        /// Guildhall against the target's reference (throughput: above 1 is better; latency: below 1), for --json.
        var ratio: Double? = nil
    }

    func run() throws {
        var rows: [Row] = []
        func n(_ x: Int) -> Int { max(1, Int(Double(x) * scale)) }
        func fanout(_ shape: LoadShape) throws -> [BenchTargetKind: BenchRun] {
            var all: [BenchTargetKind: [BenchRun]] = [:]
            for _ in 0..<runs {
                for t in [BenchTargetKind.guildhall, .redis, .nats] { all[t, default: []].append(try BenchRunner.run(t, shape: shape)) }
            }
            return all.mapValues(BenchRunner.median)
        }
        func rate(_ r: BenchRun?) -> Double { r?.result.failure == nil ? r?.result.deliveriesPerSecond ?? 0 : 0 }
        func p99(_ r: BenchRun?) -> UInt64 { r?.result.latency.quantile(0.99) ?? 0 }
        func fmt(_ d: Double) -> String { String(format: "%.2f M/s", d / 1e6) }

        var a = LoadShape()
        a.subscribers = 1000; a.publishers = 1; a.bytes = 100; a.messages = n(4000); a.window = 256
        let ra = try fanout(a)
        let bestA = max(rate(ra[.redis]), rate(ra[.nats]))
        rows.append(Row(shape: "A: 1000 subs, 1 pub, 100 B, max rate", measure: "deliveries/s", ours: fmt(rate(ra[.guildhall])),
                        others: "redis \(fmt(rate(ra[.redis]))), nats \(fmt(rate(ra[.nats])))",
                        target: String(format: "≥ best (%.2f×)", rate(ra[.guildhall]) / max(bestA, 1)), met: rate(ra[.guildhall]) >= bestA,
                        ratio: rate(ra[.guildhall]) / max(bestA, 1)))

        var c = LoadShape()
        c.subscribers = 10; c.publishers = 10; c.messages = n(20_000); c.window = 256
        let rc = try fanout(c)
        let bestC = max(rate(rc[.redis]), rate(rc[.nats]))
        rows.append(Row(shape: "C: 10 subs, 10 pubs, max rate", measure: "deliveries/s", ours: fmt(rate(rc[.guildhall])),
                        others: "redis \(fmt(rate(rc[.redis]))), nats \(fmt(rate(rc[.nats])))",
                        target: String(format: "≥ best (%.2f×)", rate(rc[.guildhall]) / max(bestC, 1)), met: rate(rc[.guildhall]) >= bestC,
                        ratio: rate(rc[.guildhall]) / max(bestC, 1)))

        var d = LoadShape()
        d.subscribers = 1000; d.publishers = 1; d.rate = 1000; d.messages = n(5000); d.window = 100_000
        let rd = try fanout(d)
        rows.append(Row(shape: "D: 1000 subs at 1000 msg/s", measure: "p99", ours: BenchRunner.micros(p99(rd[.guildhall])),
                        others: "redis \(BenchRunner.micros(p99(rd[.redis]))), nats \(BenchRunner.micros(p99(rd[.nats])))",
                        target: String(format: "≤ redis (%.2f×)", Double(p99(rd[.guildhall])) / Double(max(p99(rd[.redis]), 1))),
                        met: p99(rd[.guildhall]) <= p99(rd[.redis]),
                        ratio: Double(p99(rd[.guildhall])) / Double(max(p99(rd[.redis]), 1))))

        var f = LoadShape()
        f.subscribers = 1; f.publishers = 1; f.rate = 1000; f.messages = n(5000); f.window = 100_000
        let rf = try fanout(f)
        rows.append(Row(shape: "F: 1 sub at 1000 msg/s", measure: "p99", ours: BenchRunner.micros(p99(rf[.guildhall])),
                        others: "redis \(BenchRunner.micros(p99(rf[.redis]))), nats \(BenchRunner.micros(p99(rf[.nats])))",
                        target: String(format: "≤ 2× redis (%.2f×)", Double(p99(rf[.guildhall])) / Double(max(p99(rf[.redis]), 1))),
                        met: p99(rf[.guildhall]) <= 2 * p99(rf[.redis]),
                        ratio: Double(p99(rf[.guildhall])) / Double(max(p99(rf[.redis]), 1))))

        let sessions = n(10_000)
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
        rows.append(Row(shape: "\(sessions) idle authenticated sessions", measure: "RSS/session",
                        ours: String(format: "%.1f KiB", perSession / 1024), others: String(format: "%.0f logins/s", Double(sessions) / ri.connectSeconds),
                        target: "≤ 16 KiB", met: ri.failure == nil && perSession <= 16 * 1024))

        var st = LoadShape()
        st.subscribers = 0; st.publishers = 100; st.messages = n(2000); st.window = 64
        let rs = try BenchRunner.run(.guildhall, shape: st)
        let acked = Double(rs.result.published) / max(rs.result.seconds, 1e-9)
        rows.append(Row(shape: "store: 100 pipelining publishers", measure: "acked sends/s", ours: String(format: "%.0f", acked),
                        others: "-", target: "≥ 100,000", met: rs.result.failure == nil && acked >= 100_000))

        var sink = LoadShape()
        sink.subscribers = 4; sink.publishers = 0; sink.sinkRecords = n(2_500_000); sink.measureRecords = false
        let rk = try BenchRunner.run(.sink, shape: sink)
        rows.append(Row(shape: "load generator vs trivial sink", measure: "frames/s", ours: fmt(rk.result.deliveriesPerSecond),
                        others: "-", target: "≥ 5 M/s", met: rk.result.deliveriesPerSecond >= 5e6))

        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let rowsJSON = String(decoding: try encoder.encode(rows), as: UTF8.self)
            print("{\"bench\":\"matrix\",\"runs\":\(runs),\"rows\":\(rowsJSON)}")
            return
        }
        print("| shape | measure | Guildhall | others | target | met |")
        print("| --- | --- | --- | --- | --- | --- |")
        for r in rows { print("| \(r.shape) | \(r.measure) | \(r.ours) | \(r.others) | \(r.target) | \(r.met ? "yes" : "no") |") }
    }
}
