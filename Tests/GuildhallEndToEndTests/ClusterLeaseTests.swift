// Shard ownership through JetStream KV leases, against a
// real nats-server (with JetStream) on a free loopback port, started and
// stopped by PID here: shards spread evenly over live nodes, move when one
// leaves, and each node says what it owns on GET /cluster.

import Foundation
import GuildhallCore
import GuildhallLoop
import Testing
@testable import GuildhallServer

@Suite struct ClusterLeaseTests {
    func node(_ id: Int, _ nats: NATSServer) throws -> TestServer {
        try Self.node(id, cluster: nats.url, name: "t\(nats.port)")
    }

    /// A node of a deployment of 8 shards with short leases, in this process, with an admin endpoint.
    static func node(_ id: Int, cluster: String, name: String, replicas: Int = 1, ttlMs: Int = 2_000, renewMs: Int = 100,
                     also: (inout Settings) throws -> Void = { _ in }) throws -> TestServer {
        try TestServer {
            // No files unless a test shares a folder between its nodes (or a bucket).
            $0.filesStore = "off"
            try also(&$0)
            $0.nodeID = id
            $0.cluster = cluster
            $0.clusterName = name
            $0.clusterReplicas = replicas
            $0.shards = 8
            $0.leaseTTLMs = ttlMs
            $0.leaseRenewMs = renewMs
            $0.adminListen = "127.0.0.1:0"
        }
    }

    /// The shards the node holds and serves (a shard being taken over is held, not yet served).
    func owned(_ server: TestServer) throws -> [Int] {
        let json = try HTTPExchange.request("GET", "/cluster", port: server.adminPort).json
        return ((json["leases"] as? [[String: Any]]) ?? []).filter { $0["serving"] as? Bool == true }.compactMap { $0["shard"] as? Int }
    }

    @Test func shardsSpreadOverLiveNodesAndMoveWhenOneLeaves() async throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let one = try node(1, nats)
        defer { one.stop() }
        try await waitUntil("node 1 holding all 8 shards alone") { try owned(one).count == 8 }
        let two = try node(2, nats)
        try await waitUntil("the shards spread 4 and 4") { try owned(one).count == 4 && owned(two).count == 4 }
        #expect(Set(try owned(one)).isDisjoint(with: Set(try owned(two))), "no shard has two owners")
        let listing = try HTTPExchange.request("GET", "/cluster", port: two.adminPort).json
        #expect((listing["nodes"] as? [[String: Any]])?.count == 2)
        // Each shard taken over has an epoch marker in its log, after node 1's.
        let leases = (listing["leases"] as? [[String: Any]]) ?? []
        #expect(leases.filter { $0["serving"] as? Bool == true }.allSatisfy { ($0["log_seq"] as? Int ?? 0) > 8 }, "\(leases)")
        // Where a guild and a user live, asked of either node: the documented hash, the owner, whether this node serves it.
        let ownedByTwo = Set(try owned(two))
        for (query, shard) in [("guild=383568189012836352", ShardPlan.shard(guild: 383_568_189_012_836_352, shards: 8)),
                               ("user=alice", ShardPlan.shard(user: "alice", shards: 8))] {
            for (asked, id) in [(one, 1), (two, 2)] {
                // Each node learns the other's claims from the lease bucket on its next round, so its view converges, not at once.
                let owner = ownedByTwo.contains(shard) ? 2 : 1
                try await waitUntil("node \(id) naming node \(owner) as the owner of shard \(shard)") {
                    try HTTPExchange.request("GET", "/cluster?\(query)", port: asked.adminPort).json["owner"] as? Int == owner
                }
                let place = try HTTPExchange.request("GET", "/cluster?\(query)", port: asked.adminPort).json
                #expect(place["shard"] as? Int == shard, "\(query): \(place)")
                #expect(place["owner"] as? Int == owner, "\(query): \(place)")
                #expect(place["served_here"] as? Bool == (ownedByTwo.contains(shard) == (id == 2)), "\(query) on node \(id): \(place)")
            }
        }
        #expect(try HTTPExchange.request("GET", "/cluster?guild=abc", port: one.adminPort).status == 400)
        two.stop()
        try await waitUntil("node 1 taking the shards back") { try owned(one).count == 8 }
    }

    /// A node that cannot renew its leases (NATS is gone) stops counting
    /// the shards as its own, before the TTL would let another node take them,
    /// and is no longer ready; while it serves them, /readyz and the metrics say so.
    @Test func aNodeThatCannotRenewStopsServingItsShards() async throws {
        let nats = try NATSServer()
        let one = try node(1, nats)
        defer { one.stop() }
        try await waitUntil("node 1 holding all 8 shards") { try owned(one).count == 8 }
        let ready = try HTTPExchange.request("GET", "/readyz", port: one.adminPort)
        #expect(ready.status == 200, "\(ready)")
        let scrape = try HTTPExchange.request("GET", "/metrics", port: one.adminPort).body
        #expect(AdminEndpointTests.metric(scrape, "guildhall_cluster_shards_owned") == 8
                && AdminEndpointTests.metric(scrape, "guildhall_cluster_nats_connected") == 1, "\(scrape)")
        nats.stop()
        try await waitUntil("node 1 not ready without NATS", timeout: 5) {
            let answer = try HTTPExchange.request("GET", "/readyz", port: one.adminPort)
            return answer.status == 503 && answer.body.contains("NATS")
        }
        #expect(AdminEndpointTests.metric(try HTTPExchange.request("GET", "/metrics", port: one.adminPort).body, "guildhall_cluster_nats_connected") == 0)
        try await waitUntil("node 1 giving its shards up", timeout: 5) { try owned(one).isEmpty }
        try await waitUntil("the reason shown on /cluster") {
            let listing = try HTTPExchange.request("GET", "/cluster", port: one.adminPort).json
            return (listing["last_error"] as? String)?.isEmpty == false
        }
    }

    @Test func aNodeWithoutNATSRefusesToStart() throws {
        let port = try NATSServer.freePort()
        #expect(throws: (any Error).self) {
            _ = try TestServer {
                $0.cluster = "nats://127.0.0.1:\(port)"
                $0.clusterReplicas = 1
                $0.filesStore = "off"
            }
        }
    }

    @Test func aClusterNodeRefusesALocalFilesFolderItsPeersDoNotShare() throws {
        let port = try NATSServer.freePort()
        do {
            _ = try TestServer {
                $0.cluster = "nats://127.0.0.1:\(port)"
                $0.clusterReplicas = 1
            }
            Issue.record("a cluster node started with a files folder of its own")
        } catch let e as SettingsError {
            #expect(e.description.contains("files-store = s3") && e.description.contains("files-folder-shared = on"))
        }
    }
}
