// `guildhall-lab bench fanout`: S subscribers and P publishers, M messages of B
// bytes at full speed or a fixed rate; deliveries/s, latency percentiles
// (from the send time inside each message), loss and order. With --vs the
// same shape runs against redis-server or nats-server too, alternating, and
// the ratio is printed; with --transport ws, against Guildhall over TCP, over
// WebSocket binary (guildhall.proto) and JSON (guildhall.json), alternating.

import ArgumentParser
import Foundation

struct FanoutBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "fanout", abstract: "Fan-out throughput and latency, optionally beside redis/nats.")

    @OptionGroup var load: LoadOptions
    @Option(help: "Also run against: redis, nats (repeatable).") var vs: [String] = []
    @Option(help: "Target: guildhall or sink.") var target = "guildhall"
    @Option(help: "Guildhall settings for the server, KEY=VALUE (repeatable).") var set: [String] = []
    @Option(help: "tcp; ws: the same shape over TCP, WebSocket binary and WebSocket JSON in turn; ws-json: JSON alone; tls: over TCP and over TLS in turn.") var transport = "tcp"

    func run() throws {
        var targets = [(BenchTargetKind(rawValue: target) ?? .guildhall, BenchTransport.tcp)]
        for v in vs {
            guard let k = BenchTargetKind(rawValue: v), k == .redis || k == .nats else { throw ValidationError("--vs takes redis or nats") }
            targets.append((k, .tcp))
        }
        switch transport {
        case "tcp": break
        case "ws":
            guard targets.count == 1, targets[0].0 == .guildhall else { throw ValidationError("--transport ws compares Guildhall's own transports: no --vs or --target") }
            targets += [(.guildhall, .ws), (.guildhall, .wsJSON)]
        case "ws-json": targets = [(.guildhall, .wsJSON)]  // alone, for profiling
        case "tls":
            guard targets.count == 1, targets[0].0 == .guildhall else { throw ValidationError("--transport tls compares Guildhall over TCP and TLS: no --vs or --target") }
            targets.append((.guildhall, .tls))
        default: throw ValidationError("--transport takes tcp, ws, ws-json or tls")
        }
        var shape = load.shape
        if targets[0].0 == .sink {
            shape.sinkRecords = load.messages
            shape.publishers = 0
            shape.measureRecords = false
        }
        if !load.json {
            print("bench fanout: \(shape.subscribers) subscribers, \(shape.publishers) publishers, \(shape.sinkRecords > 0 ? shape.sinkRecords : shape.messages) messages each, "
                  + "\(shape.bytes) bytes, \(shape.rate == 0 ? "max rate" : "\(shape.rate) msg/s"), window \(shape.window), \(load.runs) run(s)")
        }
        var runs = [[BenchRun]](repeating: [], count: targets.count)
        for _ in 0..<load.runs {
            for (i, (t, over)) in targets.enumerated() {
                var s = shape
                s.transport = over
                runs[i].append(try BenchRunner.run(t, shape: s, members: load.members, settings: set))
            }
        }
        let medians = runs.map(BenchRunner.median)
        if load.json {
            print("{\"bench\":\"fanout\",\"runs\":[\(medians.map { $0.json() }.joined(separator: ","))]}")
            return
        }
        for m in medians { print(BenchRunner.describe(m)) }
        if medians.count > 1 {
            for other in medians.dropFirst() {
                // Other servers are put against Guildhall; Guildhall's other transports against TCP.
                let (a, b) = other.transport == .tcp ? (medians[0], other) : (other, medians[0])
                // The server's CPU per delivery: what a transport costs the server, whoever limits the rate.
                let cost = { (r: BenchRun) in r.serverCores / max(r.result.deliveriesPerSecond, 1) }
                print(String(format: "ratio %@/%@: %.2f× deliveries/s, p99 %.2f×, server CPU per delivery %.2f×", a.label, b.label,
                             a.result.deliveriesPerSecond / max(b.result.deliveriesPerSecond, 1),
                             Double(a.result.latency.quantile(0.99)) / Double(max(b.result.latency.quantile(0.99), 1)),
                             cost(a) / max(cost(b), 1e-12)))
            }
        }
    }
}

struct ConnectionsBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "connections", abstract: "N idle authenticated sessions: RSS per session and login rate.")

    @Option(help: "Sessions.") var sessions = 10_000
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        var shape = LoadShape()
        shape.subscribers = 0
        shape.publishers = sessions
        shape.messages = 0
        let server = try BenchTargets.start(.guildhall, members: sessions + 1, subscribers: 0, publishers: sessions)
        defer { server.stop() }
        let before = server.residentBytes
        var after = 0
        let generator = LoadGenerator(wire: server.wire, shape: shape, port: server.port)
        generator.onReady = { after = server.residentBytes }
        let result = generator.run()
        if let f = result.failure { throw BenchError(f) }
        let perSession = Double(after - before) / Double(sessions)
        let rate = Double(sessions) / result.connectSeconds
        if json {
            print("{\"bench\":\"connections\",\"sessions\":\(sessions),\"rss_before\":\(before),\"rss_after\":\(after),\"rss_per_session\":\(perSession),\"logins_per_s\":\(rate)}")
        } else {
            print("bench connections: \(sessions) idle authenticated sessions")
            print(String(format: "server RSS %.1f MiB idle, %.1f MiB with sessions: %.0f bytes (%.1f KiB) per session; %.0f logins/s",
                         Double(before) / 1_048_576, Double(after) / 1_048_576, perSession, perSession / 1024, rate))
        }
    }
}

struct StoreBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "store", abstract: "Acknowledged (committed) sends/s with pipelining publishers and no subscribers.")

    @Option(help: "Publishers.") var publishers = 100
    @Option(help: "Messages per publisher.") var messages = 2_000
    @Option(help: "Unacknowledged sends per publisher.") var window = 64
    @Option(help: "Guildhall settings, KEY=VALUE (repeatable).") var set: [String] = []
    @Flag(help: "Send chat-like text (indexed for search) instead of the benchmark record as custom content.") var text = false
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        var shape = LoadShape()
        shape.textBodies = text
        shape.subscribers = 0
        shape.publishers = publishers
        shape.messages = messages
        shape.window = window
        let run = try BenchRunner.run(.guildhall, shape: shape, settings: set)
        if let f = run.result.failure { throw BenchError(f) }
        let rate = Double(run.result.published) / run.result.seconds
        if json {
            print("{\"bench\":\"store\",\"text\":\(text),\"publishers\":\(publishers),\"sends\":\(run.result.published),\"seconds\":\(run.result.seconds),\"acked_per_s\":\(rate)}")
        } else {
            print("bench store: \(publishers) publishers × \(messages) \(text ? "text" : "custom") sends, window \(window), synchronous=NORMAL \(set.joined(separator: " "))")
            print(String(format: "%.0f acknowledged sends/s (%d sends in %.2f s)", rate, run.result.published, run.result.seconds))
        }
    }
}
