// docs/cluster.md across nodes: auto-subscribe mode and resume with the
// guild's home on another node, and what follows a guild when its home
// moves: its subscribers elsewhere keep their subscriptions (manual and
// automatic) without asking again, and miss nothing the new home sent
// before their subscriptions reached it. Three nodes in this process on one
// nats-server started here.

import Foundation
@testable import GuildhallClient
import GuildhallCore
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite(.serialized) struct GuildMoveTests {
    /// A user whose own home is on `node` (so the guild's move alone does not make its sessions log in again).
    static func user(_ prefix: String, homedOn node: TestServer) throws -> String {
        let mine = try CrossNodeTests.serving(node)
        return try #require((0..<400).lazy.map { "\(prefix)\($0)" }.first { mine.contains(ShardPlan.shard(user: $0, shards: 8)) })
    }

    static func client(_ user: String, on node: TestServer, auto: Bool = false) async throws -> (GuildhallClient, Recorder) {
        var options = ClientOptions(token: node.token(user))
        options.autoSubscribe = auto
        let client = GuildhallClient(host: "127.0.0.1", port: node.port, options: options)
        let heard = Recorder()
        client.addListener(heard)
        try await client.connect()
        return (client, heard)
    }

    /// Three nodes where a server of one member is already large (its members receive by subscription only).
    static func largeGuildOnTheSecond(_ nats: NATSServer) async throws -> ([TestServer], GHServerInfo, GHChannelInfo) {
        try await CrossNodeTests.threeNodesWithAGuildOnTheSecond(try (1...3).map {
            try ClusterLeaseTests.node($0, cluster: nats.url, name: "m\(nats.port)") { try $0.set("small-server-threshold", "1") }
        })
    }

    @Test func subscriptionsManualAndAutomaticFollowALargeGuildToItsNewHome() async throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let (nodes, g, channel) = try await Self.largeGuildOnTheSecond(nats)
        defer { for n in nodes { n.stop() } }
        let (alice, _) = try await Self.client(try Self.user("alice", homedOn: nodes[0]), on: nodes[0])
        let (bob, bobHeard) = try await Self.client(try Self.user("bob", homedOn: nodes[2]), on: nodes[2])
        // Each alone on its node with the channel (a gateway delivers to every session there that holds it).
        let (carol, carolHeard) = try await Self.client(try Self.user("carol", homedOn: nodes[0]), on: nodes[0], auto: true)
        let daveID = try Self.user("dave", homedOn: nodes[2])
        let (dave, daveHeard) = try await Self.client(daveID, on: nodes[2])
        defer { for c in [alice, bob, carol, dave] { c.close() } }
        for c in [alice, bob, carol, dave] { _ = try await c.servers.join(g.serverID) }
        #expect(try await bob.sub(.channelMsg, g.serverID, [channel.channelID]) == [.targetOk])
        // Auto mode across nodes: carol's home (node 1) ranks her channels, the guild's home (node 2) applies it.
        let auto = try await waitFor("carol auto-subscribed to the channel") {
            carolHeard.notifications.filter { $0.kind == .subscriptionChanged }.flatMap(\.subscriptions).first { $0.target.channelID == channel.channelID }
        }
        #expect(auto.type == .channelMsg)

        let first = try await alice.messages.send("before the move", to: channel.channelID)
        _ = try await bobHeard.message("the first message, by subscription") { $0.uid == first.uid }
        _ = try await carolHeard.message("the first message, by auto mode") { $0.uid == first.uid }

        nodes[1].stop()
        try await waitUntil("nodes 1 and 3 serving all 8 shards, known to both", timeout: 20) {
            try CrossNodeTests.settled([nodes[0], nodes[2]])
        }
        // The first send at the new home may come before the subscriptions do: it is not missed.
        let second = try await ShardLogTests.sendWhenServed(alice, "just after the move", to: channel.channelID)
        let third = try await alice.messages.send("later", to: channel.channelID)
        for (who, heard) in [("bob", bobHeard), ("carol", carolHeard)] {
            _ = try await heard.message("\(who) hears the third message", timeout: 20) { $0.uid == third.uid }
            #expect(heard.messages.filter { $0.channelID == channel.channelID }.map(\.seq) == [1, 2, 3], "\(who): each message once, in order")
            #expect(!heard.events.withLock { $0.contains { if case .closed = $0 { true } else { false } } }, "\(who) stayed logged in")
        }
        #expect(second.seq == 2)
        #expect(!daveHeard.messages.contains { $0.channelID == channel.channelID }, "dave never subscribed: a large server sends him nothing")
        // The mention exemption holds across nodes: mentioned, dave receives it without a subscription.
        let mention = try await alice.messages.send("@dave look", to: channel.channelID, mentions: [daveID])
        _ = try await daveHeard.message("the mention, on node 3") { $0.uid == mention.uid }
        #expect(daveHeard.messages.filter { $0.channelID == channel.channelID }.map(\.uid) == [mention.uid])
    }

    /// A session on node 3 whose guild is homed on node 2 drops and resumes:
    /// the events it missed are replayed from its gateway, in order, once;
    /// whether its user's home is on node 3 too or on node 1 (the session id
    /// names the gateway's node, where the session waits, not the home's).
    @Test(arguments: [2, 0]) func aSessionResumesOnItsNodeWithTheGuildHomedOnAnother(bobsHome: Int) async throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let (nodes, g, channel) = try await CrossNodeTests.threeNodesWithAGuildOnTheSecond(nats)
        defer { for n in nodes { n.stop() } }
        let (alice, _) = try await Self.client(try Self.user("alice", homedOn: nodes[0]), on: nodes[0])
        let (bob, bobHeard) = try await Self.client(try Self.user("bob", homedOn: nodes[bobsHome]), on: nodes[2])
        defer { alice.close(); bob.close() }
        for c in [alice, bob] { _ = try await c.servers.join(g.serverID) }
        let before = try await alice.messages.send("before", to: channel.channelID)
        _ = try await bobHeard.message("the first message") { $0.uid == before.uid }
        bob.simulateNetworkDrop()
        var sent: [UInt64] = []
        for i in 0..<10 { sent.append(try await alice.messages.send("during \(i)", to: channel.channelID).uid) }
        _ = try await waitFor("a resume") { bobHeard.resumes.isEmpty ? nil : true }
        let after = try await alice.messages.send("after", to: channel.channelID)
        _ = try await bobHeard.message("the message after the resume") { $0.uid == after.uid }
        let uids = bobHeard.messages.map(\.uid)
        #expect(uids == [before.uid] + sent + [after.uid], "each message once, in order")
        #expect(bobHeard.syncCompletions == 1, "a resume is not a new login")
    }
}

extension GuildMoveTests {
    /// Sends without client ids stream from node 1 to a guild homed on node 2
    /// when node 2 leaves: each is answered (stored, or 503 to retry), none
    /// waits for the client's timeout, and none is stored twice although the
    /// gateway sends the unanswered ones again to the new home (the UID it
    /// minted tells the new home whether the old one stored it).
    @Test func sendsInFlightWhenTheirGuildMovesAreAnsweredAndStoredOnce() async throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let (nodes, g, channel) = try await CrossNodeTests.threeNodesWithAGuildOnTheSecond(nats)
        defer { for n in nodes { n.stop() } }
        let (alice, _) = try await Self.client(try Self.user("alice", homedOn: nodes[0]), on: nodes[0])
        defer { alice.close() }
        _ = try await alice.servers.join(g.serverID)
        let acked = Locked<[String: (uid: UInt64, seq: UInt64)]>([:])
        let failures = Locked<[String]>([])
        let stop = Locked(false)
        let workers = (0..<8).map { w in
            Task {
                var i = 0
                while !stop.withLock({ $0 }) {
                    let text = "w\(w)-\(i)"
                    i += 1
                    do {
                        let m = try await alice.messages.send(text, to: channel.channelID)
                        acked.withLock { $0[text] = (m.uid, m.seq) }
                    } catch let e as GuildhallError where e.code == .unavailable {
                        continue
                    } catch {
                        failures.withLock { $0.append("\(text): \(error)") }
                        return
                    }
                }
            }
        }
        defer { stop.withLock { $0 = true } }
        _ = try await waitFor("sends flowing") { acked.withLock { $0.count } >= 100 ? true : nil }
        nodes[1].stop()
        try await waitUntil("nodes 1 and 3 serving all 8 shards, known to both", timeout: 20) {
            try CrossNodeTests.settled([nodes[0], nodes[2]])
        }
        let before = acked.withLock { $0.count }
        do { _ = try await waitFor("sends acknowledged by the new home") { acked.withLock { $0.count } >= before + 100 ? true : nil } } catch {
            Issue.record("acknowledged \(before), then \(acked.withLock { $0.count }); failures \(failures.withLock { $0 })")
            throw error
        }
        stop.withLock { $0 = true }
        for w in workers { await w.value }
        #expect(failures.withLock { $0 }.isEmpty, "every send answered: stored, or 503")

        let stored = try await ShardLogTests.history(alice, channel.channelID)
        let texts = stored.map(\.body.text)
        #expect(Set(texts).count == texts.count, "no message stored twice")
        #expect(stored.map(\.seq) == Array(1...UInt64(stored.count)), "seqs without a gap")
        let bySeq = Dictionary(stored.map { ($0.uid, $0.seq) }, uniquingKeysWith: { a, _ in a })
        for (text, a) in acked.withLock({ $0 }) { #expect(bySeq[a.uid] == a.seq, "\(text) acknowledged as \(a.uid) at seq \(a.seq)") }
    }

    /// The member list of a guild whose home moved: its new home shows who is
    /// online (it asks the members' homes, not its own empty memory), and a
    /// member going offline or coming online afterwards reaches a watched list.
    @Test func memberListPresenceFollowsAGuildToItsNewHome() async throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let (nodes, g, _) = try await CrossNodeTests.threeNodesWithAGuildOnTheSecond(nats)
        defer { for n in nodes { n.stop() } }
        let annID = try Self.user("ann", homedOn: nodes[0]), benID = try Self.user("ben", homedOn: nodes[2])
        let (ann, annHeard) = try await Self.client(annID, on: nodes[0])
        let (ben, _) = try await Self.client(benID, on: nodes[2])
        defer { for c in [ann, ben] { c.close() } }
        for c in [ann, ben] { _ = try await c.servers.join(g.serverID) }
        func online() async throws -> [String] {
            try await HomeKillTests.retrying { try await ann.members.page(of: g.serverID, onlineOnly: true) }.members.map(\.userID)
        }
        try await waitUntil("ann and ben online in the list") { try await online() == [annID, benID].sorted() }

        nodes[1].stop()
        try await waitUntil("nodes 1 and 3 serving all 8 shards, known to both", timeout: 20) {
            try CrossNodeTests.settled([nodes[0], nodes[2]])
        }
        try await waitUntil("ann and ben online in the list at the guild's new home", timeout: 20) { try await online() == [annID, benID].sorted() }
        let page = try await HomeKillTests.retrying { try await ann.members.page(of: g.serverID, onlineOnly: true, watch: true) }
        #expect(page.onlineCount == 2)
        ben.close()
        let gone = try await waitFor("ben went offline out of ann's watched list", timeout: 20) {
            annHeard.memberListUpdates.first { $0.member.userID == benID && !$0.inWindow }
        }
        #expect(gone.onlineCount == 1)
        let (again, _) = try await Self.client(benID, on: nodes[2])
        defer { again.close() }
        let back = try await waitFor("ben came back into ann's watched list", timeout: 20) {
            annHeard.memberListUpdates.first { $0.member.userID == benID && $0.inWindow }
        }
        #expect(back.member.presence.status == .presenceOnline && back.onlineCount == 2)
    }
}
