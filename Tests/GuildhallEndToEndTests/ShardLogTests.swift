// docs/cluster.md, on the real binary against a real nats-server (JetStream):
// each shard's writes go to its log before they are acknowledged, a node
// taking a shard over catches its store up from the log (an empty data
// folder rebuilds it), and a deposed owner acknowledges nothing more: its
// late writes are refused. Every process is started here on free loopback
// ports and stopped by its PID.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite(.serialized) struct ShardLogTests {
    /// A node of a deployment of 8 shards with short leases, over `folder`.
    static func node(_ id: Int, _ nats: NATSServer, folder: String, listen: String = "127.0.0.1:0") async throws -> ServerProcess {
        try await ServerProcess(folder: folder, listen: listen, arguments: [
            "--set", "cluster=\(nats.url)", "--set", "files-store=off", "--set", "node-id=\(id)", "--set", "cluster-name=t\(nats.port)",
            "--set", "cluster-replicas=1", "--set", "shards=8", "--set", "lease-ttl-ms=2000", "--set", "lease-renew-ms=100",
        ])
    }

    /// A client logged in on `port` once that node serves the user (a node
    /// that does not yet hold the user's shard closes the session with DRAINING).
    static func connected(_ user: String, device: String, port: Int) async throws -> GuildhallClient {
        let deadline = Date().addingTimeInterval(20)
        while true {
            let client = GuildhallClient(port: port, token: TestServer.token(user, device: device))
            do {
                try await client.connect()
                return client
            } catch {
                client.close()
                if Date() > deadline { throw error }
                try await Task.sleep(nanoseconds: 100_000_000)
            }
        }
    }

    /// Sends until the node serves the channel's guild (a send to a shard
    /// not yet taken over is refused as unavailable, and a client between
    /// nodes is not connected); returns the first acknowledged.
    static func sendWhenServed(_ client: GuildhallClient, _ text: String, to channel: UInt64) async throws -> GHChannelMessage {
        let deadline = Date().addingTimeInterval(20)
        while true {
            do { return try await client.messages.send(text, to: channel, clientID: text) } catch {
                let retry = (error as? GuildhallError)?.code == .unavailable || error is ClientError
                if !retry || Date() > deadline { throw error }
                try await Task.sleep(nanoseconds: 100_000_000)
            }
        }
    }

    /// The channel's whole history. A page asked while the client is between connections (a node
    /// that reloads a shard from its log closes the sessions on it) is asked again once it is back.
    static func history(_ client: GuildhallClient, _ channel: UInt64) async throws -> [GHChannelMessage] {
        var stored: [GHChannelMessage] = []
        let deadline = Date().addingTimeInterval(20)
        while true {
            let page: GHMessagePage
            do { page = try await client.messages.history(of: channel, after: stored.last?.seq ?? 0, limit: 100) } catch {
                if !(error is ClientError) || Date() > deadline { throw error }
                try await Task.sleep(nanoseconds: 100_000_000)
                continue
            }
            stored += page.messages
            if !page.moreAvailable { return stored }
        }
    }

    /// Three rounds of pipelined sends, each ended by kill -9 of the node that
    /// owns everything; the next round runs on another node and data folder
    /// (the second starts empty and is rebuilt from the logs, the first catches
    /// up on what the second wrote). Every acknowledged message is then
    /// stored exactly once at its acknowledged seq, and seqs have no gaps.
    @Test func acknowledgedSendsSurviveKillMinus9OfTheOwnerAndAnotherNodeTakesOver() async throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let folders = (0..<2).map { _ in NSTemporaryDirectory() + "guildhall-log-\(UUID().uuidString)" }
        defer { for f in folders { try? FileManager.default.removeItem(atPath: f) } }
        var server = try await Self.node(1, nats, folder: folders[0])
        let setup = try await Self.connected("alice", device: "setup", port: server.port)
        let g = try await setup.servers.create(name: "Logged")
        let channel = try await setup.channels.create(in: g.serverID, name: "stream")
        setup.close()
        let acked = Locked<[(uid: UInt64, seq: UInt64)]>([])
        for round in 0..<3 {
            let writer = try await Self.connected("alice", device: "writer", port: server.port)
            _ = try await Self.sendWhenServed(writer, "round \(round) opens", to: channel.channelID).seq
            let target = acked.withLock { $0.count } + Int.random(in: 50...200)
            let senders = pipelinedSenders(writer, to: channel.channelID, tag: "r\(round)", into: acked)
            _ = try await waitFor("\(target) acknowledged sends", timeout: 60) { acked.withLock { $0.count } >= target ? true : nil }
            server.signal(SIGKILL)
            #expect(server.wait() != 0)
            writer.close()
            for s in senders { await s.value }
            server = try await Self.node(2 + round, nats, folder: folders[(round + 1) % 2])
        }
        defer { server.signal(SIGTERM); _ = server.wait() }
        let reader = try await Self.connected("alice", device: "reader", port: server.port)
        _ = try await Self.sendWhenServed(reader, "the last word", to: channel.channelID)
        let stored = try await Self.history(reader, channel.channelID)
        let bySeq = Dictionary(stored.map { ($0.uid, $0.seq) }, uniquingKeysWith: { a, _ in a })
        #expect(bySeq.count == stored.count, "no message is stored twice")
        #expect(Set(stored.map(\.clientID)).count == stored.count, "no client id is stored twice")
        for a in acked.withLock({ $0 }) { #expect(bySeq[a.uid] == a.seq, "acknowledged \(a.uid) at seq \(a.seq)") }
        #expect(stored.map(\.seq) == Array(1...UInt64(stored.count)), "seqs 1...\(stored.count) without a gap")
        reader.close()
    }

    /// The owner stops past its lease; another node takes the shards over
    /// (catching up and fencing the log) and serves; when the old owner
    /// runs again it acknowledges nothing: a send that waited in its socket is refused.
    @Test func aDeposedOwnerAcknowledgesNothingAfterSIGCONT() async throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let folders = (0..<2).map { _ in NSTemporaryDirectory() + "guildhall-fence-\(UUID().uuidString)" }
        defer { for f in folders { try? FileManager.default.removeItem(atPath: f) } }
        let old = try await Self.node(1, nats, folder: folders[0])
        defer { if !old.child.hasExited { old.signal(SIGCONT); old.signal(SIGKILL); _ = old.wait() } }
        let alice = try await Self.connected("alice", device: "phone", port: old.port)
        let g = try await alice.servers.create(name: "Fenced")
        let channel = try await alice.channels.create(in: g.serverID, name: "c")
        let before = try await alice.messages.send("before", to: channel.channelID)
        #expect(before.seq == 1)

        old.signal(SIGSTOP)
        let new = try await Self.node(2, nats, folder: folders[1])
        defer { new.signal(SIGTERM); _ = new.wait() }
        let other = try await Self.connected("alice", device: "laptop", port: new.port)
        let taken = try await Self.sendWhenServed(other, "on the new owner", to: channel.channelID)
        #expect(taken.seq == 2, "the new owner caught up from the log before it served")

        // Whether the send reaches the stopped node's socket before or after SIGCONT, its lease is past.
        let late = Task { try await alice.messages.send("late", to: channel.channelID, clientID: "late") }
        old.signal(SIGCONT)
        await #expect(throws: (any Error).self, "the deposed owner does not acknowledge the late send") { _ = try await late.value }
        let stored = try await Self.history(other, channel.channelID)
        #expect(stored.map(\.body.text) == ["before", "on the new owner"])
        // The thawed node rejoins and takes its share back: alice's home may move again meanwhile,
        // which closes her session (DRAINING); the send goes again, once, by its client id.
        let next = try await Self.sendWhenServed(other, "after", to: channel.channelID)
        #expect(next.seq == 3)
        alice.close()
        other.close()
    }
}

/// The same against three NATS servers with everything replicated (R3).
@Suite(.serialized) struct ReplicatedLogTests {
    /// kill -9 of the NATS server leading the log's stream during pipelined
    /// sends: the node retries through the election and fails over to another
    /// server; every acknowledged send is stored once at its seq, seqs keep
    /// no gap (a send the log did not answer makes the node reload the shard
    /// from the log), and the node takes sends again afterwards.
    @Test func acknowledgedSendsSurviveKillMinus9OfTheStreamLeader() async throws {
        let nats = try NATSCluster()
        defer { nats.stop() }
        let folder = NSTemporaryDirectory() + "guildhall-r3-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(folder: folder, arguments: [
            "--set", "cluster=\(nats.urls)", "--set", "files-store=off", "--set", "node-id=1", "--set", "cluster-name=r3",
            "--set", "cluster-replicas=3", "--set", "shards=8", "--set", "lease-ttl-ms=12000", "--set", "lease-renew-ms=500",
            "--set", "log-level=info",
        ])
        defer { server.signal(SIGTERM); _ = server.wait() }
        try await server.explaining {
            let alice = try await ShardLogTests.connected("alice", device: "phone", port: server.port)
            let g = try await alice.servers.create(name: "Replicated")
            let channel = try await alice.channels.create(in: g.serverID, name: "c")
            let acked = Locked<[(uid: UInt64, seq: UInt64)]>([])
            let senders = pipelinedSenders(alice, to: channel.channelID, tag: "r3", into: acked)
            _ = try await waitFor("100 acknowledged sends", timeout: 30) { acked.withLock { $0.count } >= 100 ? true : nil }
            let leader = try #require(nats.streamLeader("GH-LOG-r3"))
            nats.kill9(leader)
            // Sends in flight through the election are acknowledged late, or refused
            // (503, or the session closed while the node reloads the shard from its
            // log); either way the node takes sends again, on this session or a new one.
            let count = acked.withLock { $0.count }
            let done = Locked(0)
            for s in senders { Task { await s.value; done.withLock { $0 += 1 } } }
            _ = try await waitFor("sends acknowledged through the election, or the senders refused", timeout: 30) {
                acked.withLock { $0.count } >= count + 100 || done.withLock { $0 } == senders.count ? true : nil
            }
            alice.close()
            for s in senders { await s.value }
            let again = try await ShardLogTests.connected("alice", device: "again", port: server.port)
            _ = try await ShardLogTests.sendWhenServed(again, "after the election", to: channel.channelID)
            let before = acked.withLock { $0.count }
            let more = pipelinedSenders(again, to: channel.channelID, tag: "r3b", into: acked)
            _ = try await waitFor("sends acknowledged again after the election", timeout: 30) {
                acked.withLock { $0.count } >= before + 100 ? true : nil
            }
            again.close()
            for s in more { await s.value }
            let reader = try await ShardLogTests.connected("alice", device: "reader", port: server.port)
            let stored = try await ShardLogTests.history(reader, channel.channelID)
            let bySeq = Dictionary(stored.map { ($0.uid, $0.seq) }, uniquingKeysWith: { a, _ in a })
            #expect(bySeq.count == stored.count, "no message is stored twice")
            for a in acked.withLock({ $0 }) { #expect(bySeq[a.uid] == a.seq, "acknowledged \(a.uid) at seq \(a.seq)") }
            #expect(stored.map(\.seq) == Array(1...UInt64(stored.count)), "seqs without a gap")
            reader.close()
        }
    }
}

/// docs/cluster.md as far as one node serves at a time: when a node dies, its
/// clients (given every node's address) reconnect to the node that takes its
/// shards over, and get every message, live or from offline sync.
@Suite(.serialized) struct NodeFailureTests {
    @Test func clientsOfADeadNodeReconnectToItsSuccessorAndMissNothing() async throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let folders = (0..<2).map { _ in NSTemporaryDirectory() + "guildhall-fail-\(UUID().uuidString)" }
        defer { for f in folders { try? FileManager.default.removeItem(atPath: f) } }
        let portB = try NATSServer.freePort()
        let a = try await ShardLogTests.node(1, nats, folder: folders[0])
        defer { if !a.child.hasExited { a.signal(SIGKILL); _ = a.wait() } }
        let addresses = [("127.0.0.1", a.port), ("127.0.0.1", portB)]
        let alice = GuildhallClient(addresses: addresses, options: ClientOptions(token: TestServer.token("alice")))
        let bob = GuildhallClient(addresses: addresses, options: ClientOptions(token: TestServer.token("bob")))
        let heard = Recorder()
        bob.addListener(heard)
        defer { alice.close(); bob.close() }
        try await alice.connect()
        try await bob.connect()
        let g = try await alice.servers.create(name: "Failover")
        let channel = try await alice.channels.create(in: g.serverID, name: "c")
        _ = try await bob.servers.join(g.serverID)
        var sent: [UInt64] = []
        for i in 1...5 { sent.append(try await alice.messages.send("before \(i)", to: channel.channelID, mentions: i == 5 ? ["bob"] : []).uid) }
        _ = try await heard.message("the last message before the crash") { $0.uid == sent.last }

        a.signal(SIGKILL)
        _ = a.wait()
        // Its port was free when picked; under load an outgoing connection may hold it a moment.
        let b = try await HomeKillTests.retrying(on: { $0 is Child.SpawnError }) {
            try await ShardLogTests.node(2, nats, folder: folders[1], listen: "127.0.0.1:\(portB)")
        }
        defer { b.signal(SIGTERM); _ = b.wait() }
        // Both clients find node 2 by themselves (sends are refused until it serves the
        // guild's shard). Bob is back before the next message: a channel message sent
        // while a session is away reaches it from history, not from offline sync (docs/reliability.md).
        try await waitUntil("bob logged in again, on node 2", timeout: 20) { heard.connectedCount >= 2 }
        let again = heard.events.withLock { events in
            events.compactMap { if case .status(.connected(let r)) = $0 { r } else { nil } }.last
        }
        #expect(again?.resumed == false && again?.resumeFailure.contains("was on node 1") == true,
                "a session of the dead node cannot resume here: \(again?.resumeFailure ?? "")")
        let after = try await ShardLogTests.sendWhenServed(alice, "after the failover", to: channel.channelID)
        sent.append(after.uid)
        #expect(after.seq == 6, "node 2 went on from the log: seqs 1...5 were node 1's")
        _ = try await heard.message("the message sent on node 2", timeout: 20) { $0.uid == after.uid }
        let seen = Set(heard.messages.map(\.uid))
        #expect(sent.allSatisfy(seen.contains), "bob got every message")
        let history = try await ShardLogTests.history(bob, channel.channelID)
        #expect(history.map(\.uid) == sent && history.map(\.seq) == Array(1...6))
    }
}
