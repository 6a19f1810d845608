// Issue 15's fault test: three node processes on one nats-server; clients
// on the nodes that are not the guild's home stream pipelined sends while
// the home is killed with -9, five times at random moments (the killed node
// starts again on its folder each time). Then every acknowledged UID is
// stored exactly once at its acknowledged seq, and the channel's seqs have
// no gap and no duplicate.

import Foundation
import GuildhallClient
import GuildhallCore
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite(.serialized) struct HomeKillTests {
    final class Cluster {
        let nats: NATSServer
        let folders = (0..<3).map { _ in NSTemporaryDirectory() + "guildhall-kill-\(UUID().uuidString)" }
        let admins: [Int]
        var nodes: [ServerProcess?] = [nil, nil, nil]

        init(_ nats: NATSServer) throws {
            self.nats = nats
            admins = try (0..<3).map { _ in try NATSServer.freePort() }
        }

        func start(_ i: Int) async throws {
            nodes[i] = try await ServerProcess(folder: folders[i], arguments: [
                "--set", "cluster=\(nats.url)", "--set", "node-id=\(i + 1)", "--set", "cluster-name=k\(nats.port)",
                "--set", "cluster-replicas=1", "--set", "shards=8", "--set", "lease-ttl-ms=2000", "--set", "lease-renew-ms=100",
                "--set", "admin-listen=127.0.0.1:\(admins[i])",
            ])
        }

        /// The node (0-based) owning `shard` and serving it, as the live nodes list it; nil while it moves.
        func owner(of shard: Int) -> Int? {
            var owners: Set<Int> = []
            for (i, n) in nodes.enumerated() where n != nil {
                guard let json = try? HTTPExchange.request("GET", "/cluster", port: admins[i]).json else { return nil }
                for entry in (json["nodes"] as? [[String: Any]]) ?? [] where ((entry["shards"] as? [Int]) ?? []).contains(shard) {
                    if let node = entry["node"] as? Int { owners.insert(node - 1) }
                }
                if i == owners.first, ((json["leases"] as? [[String: Any]]) ?? []).contains(where: { $0["shard"] as? Int == shard && $0["serving"] as? Bool != true }) {
                    return nil
                }
            }
            return owners.count == 1 ? owners.first : nil
        }

        /// Every shard owned, served, and listed alike by every live node.
        func settled() -> Bool {
            var seen: [Int: Int]?
            for (i, n) in nodes.enumerated() where n != nil {
                guard let json = try? HTTPExchange.request("GET", "/cluster", port: admins[i]).json,
                      ((json["leases"] as? [[String: Any]]) ?? []).allSatisfy({ $0["serving"] as? Bool == true }) else { return false }
                var owners: [Int: Int] = [:]
                for entry in (json["nodes"] as? [[String: Any]]) ?? [] {
                    for shard in (entry["shards"] as? [Int]) ?? [] { owners[shard] = entry["node"] as? Int }
                }
                guard owners.count == 8, seen == nil || seen! == owners else { return false }
                seen = owners
            }
            return seen != nil
        }

        func stop() {
            for n in nodes { if let n, !n.child.hasExited { n.signal(SIGTERM); _ = n.wait() } }
            for f in folders { try? FileManager.default.removeItem(atPath: f) }
        }
    }

    /// `call`, again while the cluster moves (503) or the client is between nodes.
    static func retrying<T>(_ call: () async throws -> T) async throws -> T {
        let deadline = Date().addingTimeInterval(20)
        while true {
            do { return try await call() } catch {
                let retry = (error as? GuildhallError)?.code == .unavailable || error is ClientError
                if !retry || Date() > deadline { throw error }
                try await Task.sleep(nanoseconds: 100_000_000)
            }
        }
    }

    @Test func everyAcknowledgedSendSurvivesKillMinus9OfItsHomeFiveTimes() async throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let cluster = try Cluster(nats)
        defer { cluster.stop() }
        for i in 0..<3 { try await cluster.start(i) }
        try await waitUntil("the shards spread and known to every node", timeout: 30) { cluster.settled() }
        let addresses = { cluster.nodes.map { ("127.0.0.1", $0!.port) } }
        let maker = GuildhallClient(addresses: addresses(), options: ClientOptions(token: TestServer.token("alice", device: "maker")))
        try await maker.connect()
        let g = try await Self.retrying { try await maker.createServer(name: "Killed") }
        let channel = try await Self.retrying { try await maker.createChannel(in: g.serverID, name: "stream") }
        maker.close()
        let shard = ShardPlan.shard(guild: g.serverID, shards: 8)
        let acked = Locked<[(uid: UInt64, seq: UInt64)]>([])
        for round in 0..<5 {
            let home = try await waitFor("the guild's home serving", timeout: 20) { cluster.owner(of: shard) }
            // Writers on the other nodes: the first address is their own node.
            let writers = (0..<3).filter { $0 != home }.map { i -> GuildhallClient in
                let mine = addresses()
                return GuildhallClient(addresses: [mine[i]] + mine.enumerated().filter { $0.offset != i }.map(\.element),
                                       options: ClientOptions(token: TestServer.token("w\(i)", device: "r\(round)")))
            }
            for w in writers { try await w.connect() }
            for w in writers {
                _ = try? await w.joinServer(g.serverID)
                _ = try await ShardLogTests.sendWhenServed(w, "round \(round) from \(w.addresses[0].port)", to: channel.channelID)
            }
            let target = acked.withLock { $0.count } + Int.random(in: 30...120)
            let senders = writers.enumerated().flatMap { n, w in pipelinedSenders(w, to: channel.channelID, tag: "r\(round)n\(n)", into: acked) }
            _ = try await waitFor("\(target) acknowledged sends", timeout: 60) { acked.withLock { $0.count } >= target ? true : nil }
            cluster.nodes[home]!.signal(SIGKILL)
            _ = cluster.nodes[home]!.wait()
            for w in writers { w.close() }
            for s in senders { await s.value }
            try await cluster.start(home)
        }
        _ = try await waitFor("the guild's home serving", timeout: 20) { cluster.owner(of: shard) }
        let reader = GuildhallClient(addresses: addresses(), options: ClientOptions(token: TestServer.token("alice", device: "reader")))
        try await reader.connect()
        defer { reader.close() }
        _ = try await ShardLogTests.sendWhenServed(reader, "the last word", to: channel.channelID)
        let stored = try await Self.retrying { try await ShardLogTests.history(reader, channel.channelID) }
        let bySeq = Dictionary(stored.map { ($0.uid, $0.seq) }, uniquingKeysWith: { a, _ in a })
        #expect(bySeq.count == stored.count, "no message is stored twice")
        for a in acked.withLock({ $0 }) { #expect(bySeq[a.uid] == a.seq, "acknowledged \(a.uid) at seq \(a.seq)") }
        #expect(stored.map(\.seq) == Array(1...UInt64(stored.count)), "seqs 1...\(stored.count) without a gap")
    }
}
