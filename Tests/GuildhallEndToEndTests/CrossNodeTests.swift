// Issue 15 §4-5: clients on different nodes of one cluster use a guild
// homed on a third. Three nodes in this process (each its own loops, store
// and NATS connections) on one nats-server started here; requests go to the
// node owning what they name, answers and live events come back over NATS.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite(.serialized) struct CrossNodeTests {
    /// Shards each node serves, from GET /cluster.
    static func serving(_ server: TestServer) throws -> Set<Int> {
        let json = try HTTPExchange.request("GET", "/cluster", port: server.adminPort).json
        return Set(((json["leases"] as? [[String: Any]]) ?? []).filter { $0["serving"] as? Bool == true }.compactMap { $0["shard"] as? Int })
    }

    /// A client on `server` once some node serves its user.
    static func client(_ user: String, on server: TestServer) async throws -> (GuildhallClient, Recorder) {
        let deadline = Date().addingTimeInterval(15)
        while true {
            do { return try await server.client(user) } catch {
                if Date() > deadline { throw error }
                try await Task.sleep(nanoseconds: 100_000_000)
            }
        }
    }

    @Test func clientsOnTwoNodesChatInAGuildHomedOnAThird() async throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let nodes = try (1...3).map { try ClusterLeaseTests().node($0, nats) }
        defer { for n in nodes { n.stop() } }
        try await waitUntil("the 8 shards spread over the 3 nodes and served", timeout: 20) {
            let sets = try nodes.map(Self.serving)
            return sets.allSatisfy { $0.count >= 2 } && sets.reduce(0) { $0 + $1.count } == 8
                && Set(sets.flatMap { $0 }).count == 8
        }
        // The guild is made where it is asked for: on node 2.
        let (maker, _) = try await Self.client("alice", on: nodes[1])
        let g = try await maker.createServer(name: "Across")
        let channel = try await maker.createChannel(in: g.serverID, name: "general")
        maker.close()

        let (alice, aliceHeard) = try await Self.client("alice", on: nodes[0])
        let (bob, bobHeard) = try await Self.client("bob", on: nodes[2])
        defer { alice.close(); bob.close() }
        _ = try await bob.joinServer(g.serverID)
        #expect(try await bob.myServers().map(\.serverID) == [g.serverID], "bob's servers, gathered from every node")

        // A message from node 1 reaches bob on node 3 (a small server's online member).
        let sent = try await alice.send("hello from node 1", to: channel.channelID)
        #expect(sent.seq == 1)
        let got = try await bobHeard.message("alice's message on node 3") { $0.uid == sent.uid }
        #expect(got.body.text == "hello from node 1")
        #expect(try await bob.unread([channel.channelID]).first?.unreadCount == 1, "unread for bob, asked on node 3")
        let back = try await bob.send("hi from node 3", to: channel.channelID)
        _ = try await aliceHeard.message("bob's answer on node 1") { $0.uid == back.uid }

        // Typing (to its subscribers only) and history across nodes.
        _ = try await bob.sub(.channelTyping, g.serverID, [channel.channelID])
        try await alice.sendTyping(channel.channelID)
        _ = try await waitFor("bob sees alice typing") { bobHeard.typings.first { $0.typers.contains { $0.userID == "alice" } } }
        let history = try await bob.history(of: channel.channelID, after: 0)
        #expect(history.messages.map(\.body.text) == ["hello from node 1", "hi from node 3"])

        // A direct message between the two nodes.
        let dm = try await alice.sendDirect("psst", to: "bob")
        _ = try await bobHeard.message("the direct message on node 3") { $0.uid == dm.uid }
    }
}
