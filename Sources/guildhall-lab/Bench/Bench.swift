// `guildhall-lab bench`: benchmarks that print their parameters and figures
// (JSON with --json). The load generator is this process, on libuv; the
// server under test is a child process on a free loopback port.

import ArgumentParser
import Foundation

struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a benchmark and print its figures.",
        subcommands: [FanoutBench.self, ConnectionsBench.self, StoreBench.self, MembersBench.self, MemberListBench.self, PresenceBench.self, SyncBench.self, ReceiptsBench.self, DedupBench.self, PermissionsBench.self, SearchBench.self, FilesBench.self, MatrixBench.self, SinkServer.self, ClusterBench.self])
}

/// Options shared by the load-generating benchmarks.
struct LoadOptions: ParsableArguments {
    @Option(help: "Subscribers.") var subscribers = 1000
    @Option(help: "Publishers.") var publishers = 1
    @Option(help: "Messages per publisher.") var messages = 10_000
    @Option(help: "Body bytes (at least 28).") var bytes = 100
    @Option(help: "Total publishes per second; 0 = as fast as acknowledgements allow.") var rate = 0
    @Option(help: "Unacknowledged publishes per publisher.") var window = 64
    @Option(help: "Members of Guildhall's server (at least subscribers + publishers + 1).") var members = 0
    @Option(help: "Runs per target, alternating; the median run (by deliveries/s) is reported.") var runs = 1
    @Option(help: "Extra subscribers that stop reading once subscribed (slow consumers, not measured).") var stalled = 0
    @Option(help: "Guildhall subscribers acknowledge events after this many (the SDK's default is 256).") var ackEvery = 256
    @Flag(help: "Print JSON.") var json = false

    var shape: LoadShape {
        var s = LoadShape()
        s.subscribers = subscribers
        s.publishers = publishers
        s.messages = messages
        s.bytes = max(bytes, BenchRecord.headerSize)
        s.rate = rate
        s.window = window
        s.stalled = stalled
        s.ackEvery = max(1, ackEvery)
        return s
    }
}

/// One measured run against one target.
struct BenchRun {
    let target: BenchTargetKind
    let result: LoadResult
    var transport = BenchTransport.tcp
    /// The target, and the transport when not TCP ("guildhall/ws-json").
    var label: String { transport == .tcp ? target.rawValue : "\(target.rawValue)/\(transport.rawValue)" }
    var serverRSS = 0
    var serverPeakRSS = 0
    /// Cores the server used while the load ran.
    var serverCores = 0.0

    func json(extra: String = "") -> String {
        let r = result
        return "{\"target\":\"\(target.rawValue)\",\"transport\":\"\(transport.rawValue)\",\"deliveries\":\(r.deliveries),\"expected\":\(r.expected),\"lost\":\(r.lost),"
            + "\"out_of_order\":\(r.outOfOrder),\"seconds\":\(r.seconds),\"deliveries_per_s\":\(r.deliveriesPerSecond),"
            + "\"published\":\(r.published),\"p50_us\":\(Double(r.latency.quantile(0.5)) / 1000),\"p99_us\":\(Double(r.latency.quantile(0.99)) / 1000),"
            + "\"p999_us\":\(Double(r.latency.quantile(0.999)) / 1000),\"max_us\":\(Double(r.latency.max) / 1000)"
            + ",\"server_cores\":\(serverCores),\"server_peak_rss_mib\":\(Double(serverPeakRSS) / 1_048_576)"
            + (r.failure.map { ",\"failure\":\"\($0)\"" } ?? "") + extra + "}"
    }
}

enum BenchRunner {
    /// Runs `shape` against a fresh `target`; the server is stopped afterwards.
    /// `roles`: Guildhall's server gets that many roles with overrides (see `BenchTargets.populate`).
    /// `alongside`: other load on the same server while the measured one runs
    /// (started once the load's connections are ready; it returns how to stop it).
    static func run(_ target: BenchTargetKind, shape: LoadShape, members: Int = 0, roles: Int = 0, settings: [String] = [],
                    alongside: ((RunningTarget) -> (() -> Void))? = nil) throws -> BenchRun {
        // Over WebSocket the load goes to the WebSocket listener.
        let webSocketPort = shape.transport.isWebSocket ? try BenchTargets.freePort() : 0
        var shape = shape, extra = settings + (webSocketPort > 0 ? ["ws-listen=127.0.0.1:\(webSocketPort)"] : [])
        let certificates = shape.transport == .tls ? try BenchCertificates() : nil
        if let certificates {
            shape.caFile = certificates.ca
            extra += ["tls-client=on", "tls-cert-file=\(certificates.chain)", "tls-key-file=\(certificates.key)"]
        }
        let server = try BenchTargets.start(target, members: max(members, shape.subscribers + shape.stalled + shape.publishers + 1),
                                            subscribers: shape.subscribers + shape.stalled, publishers: shape.publishers,
                                            sinkRecords: shape.sinkRecords, roles: roles, extraSettings: extra)
        defer { server.stop() }
        if ProcessInfo.processInfo.environment["GUILDHALL_BENCH_DEBUG"] != nil {
            FileHandle.standardError.write(Data("started \(target) on port \(server.port)\n".utf8))
        }
        var wire = server.wire
        if shape.textBodies, var words = wire as? GuildhallWire {
            words.textBodies = true
            wire = words
        }
        let generator = LoadGenerator(wire: wire, shape: shape, port: webSocketPort > 0 ? webSocketPort : server.port)
        var cpuBefore = 0.0
        var stopAlongside: (() -> Void)?
        generator.onReady = {
            stopAlongside = alongside?(server)
            cpuBefore = server.cpuSeconds
        }
        let result = generator.run()
        stopAlongside?()
        let cores = result.seconds > 0 ? (server.cpuSeconds - cpuBefore) / result.seconds : 0
        return BenchRun(target: target, result: result, transport: shape.transport, serverRSS: server.residentBytes,
                        serverPeakRSS: server.peakResidentBytes, serverCores: cores)
    }

    /// Median run by deliveries/s.
    static func median(_ runs: [BenchRun]) -> BenchRun {
        runs.sorted { $0.result.deliveriesPerSecond < $1.result.deliveriesPerSecond }[runs.count / 2]
    }

    static func micros(_ nanos: UInt64) -> String {
        nanos >= 10_000_000 ? String(format: "%.1f ms", Double(nanos) / 1e6) : String(format: "%.0f µs", Double(nanos) / 1e3)
    }

    static func describe(_ run: BenchRun) -> String {
        let r = run.result
        if let f = r.failure { return "\(run.label): FAILED: \(f)" }
        return String(format: "%-9@ %12.0f deliveries/s  p50 %@  p99 %@  p99.9 %@  max %@  lost %llu  out-of-order %llu  (%.2f s, server %.2f cores, generator %.2f, peak RSS %.0f MiB)",
                      run.label, r.deliveriesPerSecond, micros(r.latency.quantile(0.5)), micros(r.latency.quantile(0.99)),
                      micros(r.latency.quantile(0.999)), micros(r.latency.max), r.lost, r.outOfOrder, r.seconds, run.serverCores,
                      r.seconds > 0 ? r.generatorCPUSeconds / r.seconds : 0, Double(run.serverPeakRSS) / 1_048_576)
    }
}
