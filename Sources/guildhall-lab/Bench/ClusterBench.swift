// `guildhall-lab bench cluster` (docs/cluster.md): S subscribers spread over N nodes of
// a cluster (one nats-server, every process on this machine) against the
// same on one node: deliveries/s at full speed, p99 at a fixed rate, and
// the bytes that crossed NATS to the nodes per delivered message and per
// message. One shard: the bench guild (its ids were not minted for a
// cluster) and every user home are on one node, whose data folder, like
// every node's, starts with the guild; the other nodes are gateways for the
// subscribers spread over them. The nodes run one loop each.

import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GuildhallServer

struct ClusterBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "cluster",
                                                    abstract: "Subscribers over N nodes (NATS) against one node: deliveries/s, p99, bytes across NATS.")

    @Option(help: "Subscribers.") var subscribers = 1000
    @Option(help: "Messages (one publisher).") var messages = 5000
    @Option(help: "Publishes per second for the latency run.") var rate = 500
    @Option(help: "Nodes of the cluster.") var nodes = 3
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        var shape = LoadShape()
        shape.subscribers = subscribers
        shape.publishers = 1
        shape.messages = messages
        var paced = shape
        paced.rate = rate
        paced.messages = max(rate * 4, 500)
        let single = try BenchRunner.run(.guildhall, shape: shape, settings: ["loops=1"])
        let singlePaced = try BenchRunner.run(.guildhall, shape: paced, settings: ["loops=1"])
        let cluster = try ClusterRun(nodes: nodes, members: subscribers + 2)
        defer { cluster.stop() }
        let (spread, bytes) = try cluster.run(shape)
        let (spreadPaced, _) = try cluster.run(paced)
        let deliveries = Double(spread.expected)
        let figures: [(String, Double, UInt64)] = [
            ("1 node", single.result.deliveriesPerSecond, singlePaced.result.latency.quantile(0.99)),
            ("\(nodes) nodes", spread.deliveriesPerSecond, spreadPaced.latency.quantile(0.99)),
        ]
        if json {
            let rows = figures.map { "{\"shape\":\"\($0.0)\",\"deliveries_per_s\":\($0.1),\"p99_ns\":\($0.2)}" }
            print("{\"bench\":\"cluster\",\"subscribers\":\(subscribers),\"messages\":\(messages),\"rate\":\(rate),\"runs\":[\(rows.joined(separator: ","))],"
                  + "\"nats_bytes_per_delivery\":\(Double(bytes) / deliveries),\"nats_bytes_per_message\":\(Double(bytes) / Double(messages))}")
            return
        }
        print("bench cluster: \(subscribers) subscribers, 1 publisher, \(messages) messages (p99 at \(rate)/s), \(nodes) nodes on one nats-server")
        for (name, perSecond, p99) in figures {
            print(String(format: "%@: %.0f deliveries/s, p99 %@ at %d msg/s", name, perSecond, BenchRunner.micros(p99), rate))
        }
        print(String(format: "bytes to the nodes over NATS: %.1f per delivered message, %.0f per message (%d interested nodes)",
                     Double(bytes) / deliveries, Double(bytes) / Double(messages), nodes))
    }
}

/// A nats-server and N Guildhall nodes on it, each over its own copy of the bench data.
final class ClusterRun {
    private var processes: [Process] = []
    private var folders: [String] = []
    private(set) var ports: [Int] = []
    private let monitor: Int
    private let wire: BenchWire

    init(nodes: Int, members: Int) throws {
        let natsPort = try BenchTargets.freePort()
        monitor = try BenchTargets.freePort()
        let js = NSTemporaryDirectory() + "guildhall-bench-nats-\(UUID().uuidString)"
        folders.append(js)
        processes.append(try BenchTargets.launch(BenchTargets.find("nats-server"), ["-a", "127.0.0.1", "-p", "\(natsPort)", "-m", "\(monitor)",
                                                                                    "-js", "-sd", js], waitPort: natsPort))
        var admins: [Int] = []
        for id in 1...nodes {
            let folder = NSTemporaryDirectory() + "guildhall-bench-\(UUID().uuidString)"
            folders.append(folder)
            try BenchTargets.populate(folder: folder, members: members, subscribers: members - 2, publishers: 1)
            let admin = try BenchTargets.freePort()
            admins.append(admin)
            var args = ["serve", "--data", folder, "--listen", "127.0.0.1:0", "--set", "secret=\(BenchTargets.secret)", "--set", "log-level=warn",
                        "--set", "small-server-threshold=10", "--set", "admin-listen=127.0.0.1:\(admin)", "--set", "ws-listen=", "--set", "loops=1", "--set", "files-store=off"] + Settings.unlimitedFlags
            for s in ["cluster=nats://127.0.0.1:\(natsPort)", "node-id=\(id)", "cluster-name=bench", "cluster-replicas=1", "shards=1",
                      "lease-ttl-ms=3000", "lease-renew-ms=200"] { args += ["--set", s] }
            let (p, port) = try BenchTargets.launch(BenchTargets.serverPath, args, portFrom: "guildhall listening on 127.0.0.1:")
            processes.append(p)
            ports.append(port)
        }
        wire = GuildhallWire(secret: Array(BenchTargets.secret.utf8), server: BenchTargets.serverID, channel: BenchTargets.channelID)
        try settle(admins: admins, nodes: nodes)
    }

    /// Waits until every node serves its share and knows every shard's owner.
    private func settle(admins: [Int], nodes: Int) throws {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            var settled = true
            for admin in admins {
                guard let json = Self.get("http://127.0.0.1:\(admin)/cluster"),
                      let listed = json["nodes"] as? [[String: Any]], listed.count == nodes,
                      Set(listed.flatMap { ($0["shards"] as? [Int]) ?? [] }).count == 1,
                      ((json["leases"] as? [[String: Any]]) ?? []).allSatisfy({ $0["serving"] as? Bool == true }) else { settled = false; break }
            }
            if settled { return }
            usleep(100_000)
        }
        throw BenchError("the cluster did not settle within 60 s")
    }

    /// One load over the nodes; the bytes nats-server sent the nodes' buses meanwhile.
    func run(_ shape: LoadShape) throws -> (LoadResult, Int) {
        let before = busBytes()
        let result = LoadGenerator(wire: wire, shape: shape, port: ports[0], ports: ports).run()
        if let f = result.failure { throw BenchError(f) }
        return (result, busBytes() - before)
    }

    private func busBytes() -> Int {
        let connections = (Self.get("http://127.0.0.1:\(monitor)/connz?limit=1024")?["connections"] as? [[String: Any]]) ?? []
        return connections.filter { ($0["name"] as? String)?.hasSuffix("-bus") == true }.reduce(0) { $0 + (($1["out_bytes"] as? Int) ?? 0) }
    }

    static func get(_ url: String) -> [String: Any]? {
        guard let u = URL(string: url), let data = try? Data(contentsOf: u) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    func stop() {
        for p in processes.reversed() where p.isRunning {
            p.terminate()
            p.waitUntilExit()
        }
        for f in folders { try? FileManager.default.removeItem(atPath: f) }
    }
}
