// docs/cluster.md: clients on different nodes of one cluster use a guild
// homed on a third. Three nodes in this process (each its own loops, store
// and NATS connections) on one nats-server started here; requests go to the
// node owning what they name, answers and live events come back over NATS.

import Foundation
import GuildhallClient
import GuildhallCore
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite(.serialized) struct CrossNodeTests {
    /// Shards each node serves, from GET /cluster.
    static func serving(_ server: TestServer) throws -> Set<Int> {
        let json = try HTTPExchange.request("GET", "/cluster", port: server.adminPort).json
        return Set(((json["leases"] as? [[String: Any]]) ?? []).filter { $0["serving"] as? Bool == true }.compactMap { $0["shard"] as? Int })
    }

    /// Whether every node knows every shard's owner (each node learns the
    /// others' claims at its next lease round; until then it answers 503).
    static func settled(_ nodes: [TestServer]) throws -> Bool {
        let serving = try nodes.map(serving)
        guard Set(serving.flatMap { $0 }).count == 8 else { return false }
        for n in nodes {
            let json = try HTTPExchange.request("GET", "/cluster", port: n.adminPort).json
            var owners: [Int: Int] = [:]
            for entry in (json["nodes"] as? [[String: Any]]) ?? [] {
                for shard in (entry["shards"] as? [Int]) ?? [] { owners[shard] = entry["node"] as? Int }
            }
            for (i, set) in serving.enumerated() where !set.allSatisfy({ owners[$0] == nodes[i].settings.nodeID }) { return false }
        }
        return true
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

    /// Three nodes with the shards spread and known to all, and a guild with
    /// a channel made on node 2 (a guild is made where it is asked for).
    static func threeNodesWithAGuildOnTheSecond(_ nats: NATSServer) async throws -> ([TestServer], GHServerInfo, GHChannelInfo) {
        try await threeNodesWithAGuildOnTheSecond(try (1...3).map { try ClusterLeaseTests().node($0, nats) })
    }

    /// The same over three NATS servers, everything replicated three times (R3).
    static func threeNodesWithAGuildOnTheSecond(_ nats: NATSCluster) async throws -> ([TestServer], GHServerInfo, GHChannelInfo) {
        try await threeNodesWithAGuildOnTheSecond(try (1...3).map {
            try ClusterLeaseTests.node($0, cluster: nats.urls, name: "r3x", replicas: 3, ttlMs: 4_000, renewMs: 200)
        })
    }

    static func threeNodesWithAGuildOnTheSecond(_ nodes: [TestServer]) async throws -> ([TestServer], GHServerInfo, GHChannelInfo) {
        // 2, 3 and 3 each: a node above its share (3) would still give one
        // back, moving a home and making the sessions homed there log in again.
        try await waitUntil("the 8 shards spread over the 3 nodes, served, and known to all", timeout: 20) {
            try nodes.map(Self.serving).allSatisfy { (2...3).contains($0.count) } && Self.settled(nodes)
        }
        let (maker, _) = try await Self.client("alice", on: nodes[1])
        defer { maker.close() }
        // 503 while a shard still moves: the answer says to retry.
        let g = try await HomeKillTests.retrying { try await maker.servers.create(name: "Across") }
        return (nodes, g, try await HomeKillTests.retrying { try await maker.channels.create(in: g.serverID, name: "general") })
    }

    @Test func clientsOnTwoNodesChatInAGuildHomedOnAThird() async throws {
        let nats = try NATSCluster()
        defer { nats.stop() }
        let (nodes, g, channel) = try await Self.threeNodesWithAGuildOnTheSecond(nats)
        defer { for n in nodes { n.stop() } }

        let (alice, aliceHeard) = try await Self.client("alice", on: nodes[0])
        let (bob, bobHeard) = try await Self.client("bob", on: nodes[2])
        defer { alice.close(); bob.close() }
        _ = try await bob.servers.join(g.serverID)
        #expect(try await bob.servers.mine().map(\.serverID) == [g.serverID], "bob's servers, gathered from every node")

        // A message from node 1 reaches bob on node 3 (a small server's online member).
        let sent = try await alice.messages.send("hello from node 1", to: channel.channelID)
        #expect(sent.seq == 1)
        let got = try await bobHeard.message("alice's message on node 3") { $0.uid == sent.uid }
        #expect(got.body.text == "hello from node 1")
        #expect(try await bob.messages.unread([channel.channelID]).first?.unreadCount == 1, "unread for bob, asked on node 3")
        let back = try await bob.messages.send("hi from node 3", to: channel.channelID)
        _ = try await aliceHeard.message("bob's answer on node 1") { $0.uid == back.uid }

        // Typing (to its subscribers only) and history across nodes.
        _ = try await bob.sub(.channelTyping, g.serverID, [channel.channelID])
        try await alice.messages.sendTyping(channel.channelID)
        _ = try await waitFor("bob sees alice typing") { bobHeard.typings.first { $0.typers.contains { $0.userID == "alice" } } }
        let history = try await bob.messages.history(of: channel.channelID, after: 0)
        #expect(history.messages.map(\.body.text) == ["hello from node 1", "hi from node 3"])
        // Search, answered by the guild's home on node 2.
        #expect(try await bob.messages.search("node", in: .server(g.serverID)).hits.map(\.message.body.text) == ["hi from node 3", "hello from node 1"])

        // A direct message between the two nodes, and a search of it at the conversation's home.
        let dm = try await alice.directs.send("psst, the key is under the mat", to: "bob")
        _ = try await bobHeard.message("the direct message on node 3") { $0.uid == dm.uid }
        let conversation = try await bob.directs.open(with: "alice").conversationID
        #expect(try await bob.messages.search("mat", in: .conversation(conversation)).hits.map(\.message.uid) == [dm.uid])
        // A block, kept at the conversation's home: bob's message while blocked never reaches alice; after the unblock one does.
        try await alice.directs.block("bob")
        #expect(try await alice.directs.blockedUsers() == ["bob"])
        let withheld = try await bob.directs.send("let me in", to: "alice")
        try await alice.directs.unblock("bob")
        let heard = try await bob.directs.send("thanks", to: "alice")
        _ = try await aliceHeard.message("the message after the unblock") { $0.uid == heard.uid }
        #expect(!aliceHeard.messages.contains { $0.uid == withheld.uid })

        // Presence, decided at alice's home, heard on other nodes: by bob (a
        // fellow member of a small server, and her conversation's peer) and
        // by carol on node 2, who watches her.
        _ = try await bobHeard.presence(of: "alice") { $0.status == .presenceOnline }
        let (carol, carolHeard) = try await Self.client("carol", on: nodes[1])
        defer { carol.close() }
        #expect(try await carol.people.watchPresence(["alice", "bob"]).map(\.status) == [.targetOk, .targetOk])
        _ = try await carolHeard.presence(of: "bob") { $0.status == .presenceOnline }
        try await alice.people.setPresence(.presenceDoNotDisturb, text: "across")
        _ = try await bobHeard.presence(of: "alice") { $0.status == .presenceDoNotDisturb && $0.customText == "across" }
        _ = try await carolHeard.presence(of: "alice") { $0.status == .presenceDoNotDisturb }
        // A profile, set at alice's home: bob hears it, the guild's home (node 2) copies it onto her member record, carol asks for it.
        try await alice.people.setProfile(displayName: "Alice A.")
        #expect(try await bobHeard.notification(.userUpdated).user.displayName == "Alice A.")
        try await waitUntil("the copy on node 2") { try await bob.members.list(of: g.serverID).first { $0.userID == "alice" }?.displayName == "Alice A." }
        #expect(try await carol.people.profiles(["bob", "alice"]).map(\.displayName) == ["", "Alice A."])
        bob.close()
        _ = try await carolHeard.presence(of: "bob") { $0.status == .presenceOffline && $0.lastSeen > 0 }

        // An invite code made on node 1 for the guild on node 2, looked up and joined by from node 2's
        // neighbour: a code names no home, so every node is asked and the guild's home answers.
        // alice takes direct messages only from server-mates: each node answers its part (her home's choice, the guild's home
        // the shared server), so carol on node 2 is refused until she joins the guild, and then let in.
        #expect(try await alice.directs.setDirectMessagePrivacy(serverMatesOnly: true))
        await expectError(.forbidden) { _ = try await carol.directs.send("hello?", to: "alice") }
        let code = try await alice.invites.create(in: g.serverID, maxUses: 1)
        #expect(try await carol.invites.lookUp(code.code).serverName == "Across")
        #expect(try await carol.invites.join(code.code).channelID == channel.channelID)
        let mate = try await carol.directs.send("hello, fellow member", to: "alice")
        _ = try await aliceHeard.message("carol's message once a server-mate") { $0.uid == mate.uid }
        #expect(try await carol.servers.mine().map(\.serverID) == [g.serverID])
        await expectError(.notFound) { _ = try await carol.invites.lookUp(code.code) }
    }
}

extension CrossNodeTests {
    /// The guild's home node leaves: its shards move to the other two, whose
    /// clients (given every node's address) log in again where needed, and the
    /// chat goes on with nothing lost.
    @Test func whenTheGuildsNodeLeavesTheChatGoesOnAcrossTheOthers() async throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let (nodes, g, channel) = try await Self.threeNodesWithAGuildOnTheSecond(nats)
        defer { for n in nodes { n.stop() } }
        let everyNode = nodes.map { ("127.0.0.1", $0.port) }
        let alice = GuildhallClient(addresses: [everyNode[0], everyNode[2]], options: ClientOptions(token: nodes[0].token("alice")))
        let bob = GuildhallClient(addresses: [everyNode[2], everyNode[0]], options: ClientOptions(token: nodes[0].token("bob")))
        let bobHeard = Recorder()
        bob.addListener(bobHeard)
        defer { alice.close(); bob.close() }
        try await alice.connect()
        try await bob.connect()
        _ = try await bob.servers.join(g.serverID)
        let first = try await alice.messages.send("before the move", to: channel.channelID)
        _ = try await bobHeard.message("the first message") { $0.uid == first.uid }
        // A group conversation made on node 2 (where carol asks), placed there as a guild is.
        let (carol, _) = try await Self.client("carol", on: nodes[1])
        let group = try await HomeKillTests.retrying { try await carol.directs.createGroup(named: "Movers", with: ["alice", "bob"]) }
        let hello = try await carol.directs.send("see you on the other side", inConversation: group.conversationID)
        _ = try await bobHeard.message("carol's group message") { $0.uid == hello.uid }
        carol.close()

        nodes[1].stop()
        try await waitUntil("nodes 1 and 3 serving all 8 shards, known to both", timeout: 20) {
            try Self.settled([nodes[0], nodes[2]])
        }
        // Bob is back (logged in again if his home moved) before the next message.
        try await waitUntil("bob connected", timeout: 20) { bob.isConnected }
        let second = try await ShardLogTests.sendWhenServed(alice, "after the move", to: channel.channelID)
        #expect(second.seq == 2, "the new home went on from the log")
        _ = try await bobHeard.message("the message after the move", timeout: 20) { $0.uid == second.uid }
        let history = try await bob.messages.history(of: channel.channelID, after: 0)
        #expect(history.messages.map(\.body.text) == ["before the move", "after the move"])
        // The new home's index came with the log it applied.
        #expect(try await bob.messages.search("move", in: .server(g.serverID)).hits.map(\.message.body.text) == ["after the move", "before the move"])
        // The group moved with its shard: its members, its history, and it goes on.
        let moved = try await HomeKillTests.retrying { try await alice.directs.send("made it", inConversation: group.conversationID) }
        #expect(moved.seq == 2 && moved.recipientCount == 2)
        _ = try await bobHeard.message("alice's group message after the move", timeout: 20) { $0.uid == moved.uid }
        let held = try #require(try await bob.directs.list().first { $0.conversationID == group.conversationID })
        #expect(held.memberIds == ["alice", "bob", "carol"] && held.ownerID == "carol" && held.name == "Movers")
        #expect(try await bob.messages.history(of: group.conversationID).messages.map(\.uid) == [hello.uid, moved.uid])
    }
}

extension CrossNodeTests {
    /// Group read receipts, offline sync, received status and guests, with
    /// the guild's home on node 2 and the clients on nodes 1 and 3.
    @Test func receiptsSyncReceivedStatusAndGuestsWorkAcrossNodes() async throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let (nodes, g, channel) = try await Self.threeNodesWithAGuildOnTheSecond(nats)
        defer { for n in nodes { n.stop() } }
        let (alice, aliceHeard) = try await Self.client("alice", on: nodes[0])
        var (bob, bobHeard) = try await Self.client("bob", on: nodes[2])
        defer { alice.close(); bob.close() }
        _ = try await bob.servers.join(g.serverID)

        // Receipts: bob answers alice's request; alice hears it on node 1.
        let asked = try await alice.messages.send("read me", to: channel.channelID, needReceipt: true)
        _ = try await waitFor("bob asked for a receipt, on node 3") { bobHeard.receiptRequests.contains(asked.uid) ? true : nil }
        _ = try await bob.receipts.respond(channel: channel.channelID, [asked.uid])
        _ = try await waitFor("alice hears bob's receipt, on node 1") { aliceHeard.receiptResponses.first { $0.uid == asked.uid } }
        #expect(try await alice.receipts.info([asked.uid]).first?.readerCount == 1)

        // Offline sync: bob is away while alice mentions him; he logs in on node 3 again and gets it.
        bob.close()
        let mention = try await alice.messages.send("@bob you missed this", to: channel.channelID, mentions: ["bob"])
        (bob, bobHeard) = try await Self.client("bob", on: nodes[2])
        _ = try await bobHeard.message("the mention, from offline sync") { $0.uid == mention.uid }

        // Received status: set on node 3, read back on node 1's side of bob (another device).
        _ = try await bob.messages.setReceivedStatus([mention.uid], read: true)
        let (bobPhone, _) = try await Self.client("bob", on: nodes[0])
        defer { bobPhone.close() }
        #expect(try await bobPhone.messages.receivedStatus([mention.uid]).first?.isRead == true)

        // A guest (carol, not a member) views a server that allows guests, from node 3.
        let (carol, _) = try await Self.client("carol", on: nodes[2])
        defer { carol.close() }
        let open = try await alice.servers.create(name: "Open house", allowGuests: true)
        _ = try await alice.channels.create(in: open.serverID, name: "lobby")
        #expect(try await carol.servers.enterAsGuest(open.serverID).serverID == open.serverID)
    }
}

extension CrossNodeTests {
    /// Fan-out by interest (docs/cluster.md): the guild's home sends a node its
    /// events only while a session there is interested, once per gateway loop
    /// whatever the number of recipients there. Counted by nats-server (/connz).
    @Test func aNodeWithoutAnInterestedSessionGetsNoEventTraffic() async throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let (nodes, g, channel) = try await Self.threeNodesWithAGuildOnTheSecond(nats)
        defer { for n in nodes { n.stop() } }
        // People whose own homes (inbox, received status: a user's shard) are not on node 3 either:
        // what a recipient's acknowledgements move there is no event, yet it would count.
        let third = try Self.serving(nodes[2])
        let people = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "niaj"]
            .filter { !third.contains(ShardPlan.shard(user: $0, shards: 8)) }
        try #require(people.count >= 3, "three of twelve users homed off node 3")
        var clients: [(GuildhallClient, Recorder)] = []
        for name in people.prefix(3) {
            let (client, heard) = try await Self.client(name, on: nodes[0])
            if name != "alice" { _ = try await client.servers.join(g.serverID) }  // alice made the guild
            clients.append((client, heard))
        }
        defer { for (c, _) in clients { c.close() } }
        let sender = clients[0].0
        // What the logins and joins set going has crossed first: presence, for one, is told up
        // to a second after it changed (presence-frame-interval-ms).
        let before = try await Self.busQuiet(nats, node: 3)
        var last: UInt64 = 0
        for i in 1...50 { last = try await sender.messages.send("burst \(i)", to: channel.channelID).uid }
        for (_, heard) in clients.dropFirst() { _ = try await heard.message("the burst's last message") { $0.uid == last } }
        let after = nats.delivered()
        func delta(_ node: Int) -> Int { (after["guildhall-\(node)-bus"] ?? 0) - (before["guildhall-\(node)-bus"] ?? 0) }
        #expect(delta(3) == 0, "node 3 has no session in the guild: no event crossed to it")
        // Node 1 holds two recipients: each message crosses once (or less: a home turn's events travel together),
        // with its answer to the sender (sends are answered by the home, one message per turn too).
        #expect(delta(1) > 0 && delta(1) <= 2 * 50, "messages to node 1: \(delta(1)) for 50 sends to 2 recipients there")
    }

    /// nats-server's counts once nothing crossed to `node`'s bus for `still` seconds.
    static func busQuiet(_ nats: NATSServer, node: Int, still: Double = 1.5) async throws -> [String: Int] {
        var counts = nats.delivered(), since = Date()
        try await waitUntil("nothing crossing to node \(node) for \(still) s", timeout: 20) {
            let now = nats.delivered()
            if now["guildhall-\(node)-bus"] != counts["guildhall-\(node)-bus"] { since = Date() }
            counts = now
            return Date().timeIntervalSince(since) >= still
        }
        return counts
    }
}

extension CrossNodeTests {
    /// Three nodes sharing one files folder, each serving files on its WebSocket listener, with a guild homed on the second.
    static func threeNodesSharingFiles(_ nats: NATSServer, in shared: String) async throws -> ([TestServer], GHServerInfo, GHChannelInfo) {
        let started = try (1...3).map { id in
            try ClusterLeaseTests.node(id, cluster: nats.url, name: "f\(nats.port)") {
                $0.filesStore = "local"
                $0.filesFolder = shared
                $0.filesFolderShared = "on"
                $0.wsListen = "127.0.0.1:0"
            }
        }
        for n in started { n.update { $0.filesURL = "http://127.0.0.1:\(n.webSocketPort)" } }
        return try await threeNodesWithAGuildOnTheSecond(started)
    }

    /// Nodes sharing one files folder: a file uploaded through one node's
    /// listener, sent from another through the guild's home on a third, is
    /// downloaded from a fourth's by the link a reader there got.
    @Test func aFileCrossesNodesThroughTheFolderTheyShare() async throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let shared = NSTemporaryDirectory() + "guildhall-shared-files-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: shared) }
        let (nodes, g, channel) = try await Self.threeNodesSharingFiles(nats, in: shared)
        defer { for n in nodes { n.stop() } }
        let (alice, _) = try await Self.client("alice", on: nodes[0])
        let (bob, bobHeard) = try await Self.client("bob", on: nodes[2])
        defer { alice.close(); bob.close() }
        _ = try await bob.servers.join(g.serverID)

        let bytes = Array("minutes of the meeting, from node 1".utf8)
        let u = try await alice.files.createUpload("minutes.txt", size: UInt64(bytes.count), contentType: "text/plain", to: .channel(channel.channelID))
        #expect(u.url.hasPrefix("http://127.0.0.1:\(nodes[1].webSocketPort)/files/upload/"), "the guild's home made it: its listener")
        // Any node's listener takes it: the ticket is checked with the secret they share.
        let elsewhere = u.url.replacingOccurrences(of: ":\(nodes[1].webSocketPort)/", with: ":\(nodes[0].webSocketPort)/")
        #expect(try Curl.put(elsewhere, bytes, type: "text/plain").status == 201)
        let sent = try await HomeKillTests.retrying { try await alice.messages.send("the minutes", to: channel.channelID, attachments: [u.fileID]) }
        let got = try await bobHeard.message("the file's message on node 3") { $0.uid == sent.uid }
        let link = try #require(got.attachments.first?.url)
        #expect(link.hasPrefix("http://127.0.0.1:\(nodes[2].webSocketPort)/files/\(u.fileID)/minutes.txt?u=bob&"), "node 3's gateway made bob's link")
        #expect(try Curl.run([link]).body == bytes)

        // A webhook of the channel (its home on node 2), posted to through node 3's listener and
        // node 1's: each hands the post to the home, and its answer comes back (a wrong secret's too).
        let hook = try await HomeKillTests.retrying { try await alice.webhooks.create(in: channel.channelID, name: "Across") }
        let posted = try WebhookTests.post(hook.path, port: nodes[2].webSocketPort, body: #"{"content": "posted on node 3"}"#)
        #expect(posted.status == 200, "\(posted.body)")
        let heard = try await bobHeard.message("the webhook's post") { $0.body.text == "posted on node 3" }
        #expect(heard.webhook.name == "Across")
        let wrong = hook.path.replacingOccurrences(of: hook.secret, with: String(repeating: "0", count: 64))
        #expect(try WebhookTests.post(wrong, port: nodes[0].webSocketPort, body: #"{"content": "x"}"#).status == 404)
    }
}

extension CrossNodeTests {
    /// Files when the guild's home moves (its node stops): a file sent before
    /// the move still downloads by the link history gives after it, and an
    /// upload asked for at the old home (its row in the guild's log) is
    /// finished through another node's listener and sent through the new home.
    @Test func filesOutliveTheirGuildsMoveToAnotherNode() async throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let shared = NSTemporaryDirectory() + "guildhall-moved-files-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: shared) }
        let (nodes, g, channel) = try await Self.threeNodesSharingFiles(nats, in: shared)
        defer { for n in nodes { n.stop() } }
        let (alice, _) = try await Self.client("alice", on: nodes[0])
        let bobID = try GuildMoveTests.user("bob", homedOn: nodes[2])
        let (bob, bobHeard) = try await Self.client(bobID, on: nodes[2])
        defer { alice.close(); bob.close() }
        _ = try await bob.servers.join(g.serverID)

        let before = Array("the agenda, sent before the move".utf8), after = Array("the minutes, sent after it".utf8)
        let first = try await alice.files.createUpload("agenda.txt", size: UInt64(before.count), contentType: "text/plain", to: .channel(channel.channelID))
        #expect(try Curl.put(first.url, before, type: "text/plain").status == 201)
        let sent = try await alice.messages.send("the agenda", to: channel.channelID, attachments: [first.fileID])
        _ = try await bobHeard.message("the agenda's message") { $0.uid == sent.uid }
        let second = try await alice.files.createUpload("minutes.txt", size: UInt64(after.count), contentType: "text/plain", to: .channel(channel.channelID))
        let oldHomesPort = nodes[1].webSocketPort

        nodes[1].stop()
        try await waitUntil("nodes 1 and 3 serving all 8 shards, known to both", timeout: 20) { try Self.settled([nodes[0], nodes[2]]) }
        let kept = try await HomeKillTests.retrying { try await bob.messages.history(of: channel.channelID) }.messages
        let agenda = try #require(kept.first { $0.uid == sent.uid }?.attachments.first, "the agenda's message, with its file, at the new home")
        #expect(agenda.fileID == first.fileID && agenda.url.contains("?u=\(bobID)&"))
        #expect(try Curl.run([agenda.url]).body == before)

        let elsewhere = second.url.replacingOccurrences(of: ":\(oldHomesPort)/", with: ":\(nodes[0].webSocketPort)/")
        #expect(elsewhere != second.url, "the upload was asked for at the old home")
        #expect(try Curl.put(elsewhere, after, type: "text/plain").status == 201)
        let minutes = try await HomeKillTests.retrying { try await alice.messages.send("the minutes", to: channel.channelID, attachments: [second.fileID]) }
        let got = try await bobHeard.message("the minutes' message, from the new home", timeout: 20) { $0.uid == minutes.uid }
        let link = try #require(got.attachments.first?.url)
        #expect(try Curl.run([link]).body == after)
    }
}

extension CrossNodeTests {
    /// Push across nodes (docs/features.md "Push"): a direct message from a
    /// client on node 1 to a user with no session online is filed at that
    /// user's home, and that node posts the notice, with the message's
    /// preview: whether the recipient's home is on the node of the
    /// conversation's home (which stores the message) or on another (whose
    /// store lacks it: the message travels with the item).
    @Test(arguments: [false, true]) func aMessageToAnOfflineUserIsPushedFromTheirHomeWhereverItIs(homesApart: Bool) async throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let receiver = try PushReceiver()
        defer { receiver.stop() }
        let nodes = try (1...3).map { id in
            try ClusterLeaseTests.node(id, cluster: nats.url, name: "p\(nats.port)") {
                $0.pushGatewayURL = receiver.url
                $0.pushSecret = "cluster-push-secret"
                $0.resumeWindowMs = 0
            }
        }
        defer { for n in nodes { n.stop() } }
        _ = try await Self.threeNodesWithAGuildOnTheSecond(nodes)
        // The conversation's home is the lower user's ("alice" < "bob…"): alice's.
        let serving = try nodes.map(Self.serving)
        func node(of user: String) -> Int? { serving.firstIndex { $0.contains(ShardPlan.shard(user: user, shards: 8)) } }
        let recipient = try #require((0..<400).lazy.map { "bob\($0)" }.first { (node(of: $0) != node(of: "alice")) == homesApart })
        let (bob, _) = try await Self.client(recipient, on: nodes[2])
        try await HomeKillTests.retrying { try await bob.people.registerPushToken("tok-bob", platform: "fcm") }
        let (alice, aliceHeard) = try await Self.client("alice", on: nodes[0])
        defer { alice.close() }
        _ = try await alice.people.watchPresence([recipient])
        _ = try await aliceHeard.presence(of: recipient) { $0.status == .presenceOnline }
        bob.close()
        _ = try await aliceHeard.presence(of: recipient) { $0.status == .presenceOffline }
        let dm = try await alice.directs.send("across the cluster", to: recipient)
        let notice = try await waitFor("the notice") { receiver.received.flatMap(\.notices).first { $0["message_uid"] as? String == "\(dm.uid)" } }
        let device = (notice["devices"] as? [[String: Any]])?.first
        #expect(notice["user_id"] as? String == recipient && notice["kind"] as? String == "direct" && notice["sender_id"] as? String == "alice")
        #expect(device?["token"] as? String == "tok-bob" && device?["preview"] as? String == "across the cluster")
    }
}
