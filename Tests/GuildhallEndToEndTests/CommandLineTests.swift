// The `guildhall` binary's subcommands: token minting, configuration
// precedence, and the scriptable JSON client against a real server.

import Foundation
import GuildhallWire
import GuildhallClient
import Testing
@testable import GuildhallCore
@testable import GuildhallServer

@Suite struct CommandLineTests {
    @Test func tokenMintsATokenTheServerAccepts() throws {
        let (rc, out) = try Binary.run(["token", "--user", "alice", "--device", "cli", "--ttl", "60", "--set", "secret=\(testSecret)"])
        #expect(rc == 0)
        let token = out.trimmingCharacters(in: .whitespacesAndNewlines)
        let verified = try AccessToken.verify(token, secret: Array(testSecret.utf8), nowSeconds: systemClock() / 1000)
        #expect(verified.user == "alice" && verified.device == "cli")
        #expect(verified.expiry <= systemClock() / 1000 + 60)
    }

    @Test func flagsBeatEnvironmentWhichBeatsTheConfigFile() throws {
        let file = NSTemporaryDirectory() + "guildhall-\(UUID().uuidString).conf"
        try "# test\nwrite-batch = 3\nmax-mentions = 4\nheartbeat-interval-ms = 1000\n".write(toFile: file, atomically: true, encoding: .utf8)
        let (rc, out) = try Binary.run(["serve", "--config", file, "--set", "write-batch=7", "--listen", "0.0.0.0:9", "--print-config"],
                                       environment: ["GUILDHALL_WRITE_BATCH": "5", "GUILDHALL_MAX_MENTIONS": "6"])
        #expect(rc == 0)
        #expect(out.contains("\nwrite-batch = 7\n"))
        #expect(out.contains("\nmax-mentions = 6\n"))
        #expect(out.contains("\nheartbeat-interval-ms = 1000\n"))
        #expect(out.contains("\nlisten = 0.0.0.0:9\n"))
        #expect(out.contains("\ndata = ./data\n"))
    }

    @Test func aBadSettingIsRefusedWithItsName() throws {
        let (rc, _) = try Binary.run(["serve", "--set", "write-batch=zero", "--print-config"])
        #expect(rc != 0)
        var s = Settings()
        #expect(throws: SettingsError.self) { try s.apply(configFile: "no-such-setting = 1") }
        #expect(throws: SettingsError.self) { try s.apply(configFile: "listen = nowhere") }
        #expect(throws: SettingsError.self) { try s.apply(environment: ["GUILDHALL_SYNCHRONOUS": "sometimes"]) }
        try s.apply(configFile: "synchronous = full # durable\n\nnode-id = \"12\"")
        #expect(s.synchronous == "FULL" && s.nodeID == 12)
    }

    /// `top -H`, `ps -L` and perf name each thread of `guildhall serve`, its loops
    /// too, while the process keeps its own name for `pgrep guildhall`.
    @Test func theServersThreadsCarryTheirNames() async throws {
        let folder = NSTemporaryDirectory() + "guildhall-names-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(folder: folder, arguments: ["--set", "loops=2"])
        defer { server.signal(SIGTERM); _ = server.wait() }
        func name(_ task: String) -> String {
            ((try? String(contentsOfFile: "/proc/\(server.pid)/task/\(task)/comm", encoding: .utf8)) ?? "")
                .trimmingCharacters(in: .newlines)
        }
        func names() -> Set<String> {
            Set(((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(server.pid)/task")) ?? []).map(name))
        }
        let wanted: Set<String> = ["gh-loop-0", "gh-loop-1", "gh-writer", "gh-reader", "gh-checkpoint"]
        _ = try await waitFor("the threads' names", timeout: 10) { wanted.isSubset(of: names()) ? true : nil }
        #expect(name(String(server.pid)) == "guildhall")
    }

    @Test func healthSaysWhetherAServerAnswers() throws {
        let server = try TestServer()
        let port = server.port
        let (healthy, _) = try Binary.run(["health", "--server", "127.0.0.1:\(port)"])
        #expect(healthy == 0)
        server.stop()
        let (unhealthy, out) = try Binary.run(["health", "--server", "127.0.0.1:\(port)"])
        #expect(unhealthy != 0)
        #expect(out.contains("cannot connect"))
    }

    @Test func theJSONClientRunsOneCommandALine() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (bob, bobEvents) = try await server.client("bob")
        let token = server.token("alice", device: "cli")
        let owned = try await waitForJSON(server: server, token: token, lines: [#"{"cmd":"create-server","name":"From CLI"}"#])
        let serverID = try #require(owned.first { $0["cmd"] as? String == "create-server" }?["result"] as? [String: Any])["serverId"] as! String
        _ = try await bob.servers.join(UInt64(serverID)!)
        let lines = try await waitForJSON(server: server, token: token, lines: [
            #"{"cmd":"create-channel","server":\#(serverID),"name":"cli"}"#,
            #"{"cmd":"nonsense"}"#,
            #"{"cmd":"servers"}"#,
        ])
        let channel = try #require(lines.first { $0["cmd"] as? String == "create-channel" }?["result"] as? [String: Any])
        #expect(channel["name"] as? String == "cli")
        let bad = try #require(lines.first { $0["cmd"] as? String == "nonsense" })
        #expect(bad["ok"] as? Bool == false)
        let channelID = channel["channelId"] as! String
        let sent = try await waitForJSON(server: server, token: token, lines: [#"{"cmd":"send","channel":"\#(channelID)","text":"hi from the cli"}"#])
        #expect(sent.first { $0["cmd"] as? String == "send" }?["ok"] as? Bool == true)
        _ = try await bobEvents.message { $0.body.text == "hi from the cli" }
    }

    @Test func theClientKicksWithAReasonAndReadsTheAuditLog() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (g, _) = try await guild(server, owner: alice, members: [bob])
        let lines = try await waitForJSON(server: server, token: server.token("alice", device: "cli"), lines: [
            #"{"cmd":"kick","server":"\#(g.serverID)","user":"bob","reason":"off topic"}"#,
            #"{"cmd":"audit-log","server":"\#(g.serverID)","action":"member_kicked"}"#,
            #"{"cmd":"audit-log","server":"\#(g.serverID)","action":"kicked"}"#,
        ])
        let log = try #require(lines.first { $0["cmd"] as? String == "audit-log" && $0["ok"] as? Bool == true }?["result"] as? [String: Any])
        let entries = try #require(log["entries"] as? [[String: Any]])
        #expect(entries.count == 1 && entries[0]["target"] as? String == "bob" && entries[0]["reason"] as? String == "off topic"
                && entries[0]["action"] as? String == "AUDIT_MEMBER_KICKED", "\(entries)")
        let unknown = try #require(lines.first { $0["cmd"] as? String == "audit-log" && $0["ok"] as? Bool == false })
        #expect("\(unknown)".contains("member_kicked"), "the error lists the names: \(unknown)")
    }

    @Test func theClientSubscribesReadsAndTypesFromTheCommandLine() async throws {
        let server = try TestServer { try $0.set("small-server-threshold", "2") }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (g, c) = try await guild(server, owner: alice, members: [])
        _ = try await alice.messages.send("one", to: c.channelID)
        let token = server.token("bob", device: "cli")
        let bob = GuildhallClient(port: server.port, token: server.token("bob"))
        try await bob.connect()
        _ = try await bob.servers.join(g.serverID)
        _ = try await alice.messages.send("two", to: c.channelID)
        let lines = try await waitForJSON(server: server, token: token, lines: [
            #"{"cmd":"subscribe","type":"channel_msg","server":"\#(g.serverID)","channels":["\#(c.channelID)"]}"#,
            #"{"cmd":"unread","channels":["\#(c.channelID)"]}"#,
            #"{"cmd":"read","channel":"\#(c.channelID)"}"#,
            #"{"cmd":"typing","channel":"\#(c.channelID)"}"#,
            #"{"cmd":"subscribe","type":"typing","server":"\#(g.serverID)","channels":["\#(c.channelID)"],"op":"unsubscribe"}"#,
        ])
        let results = lines.filter { $0["ok"] as? Bool == true }
        #expect(results.count == 5, "\(lines)")
        let unread = (lines.first { $0["cmd"] as? String == "unread" }?["result"] as? [String: Any])?["unreads"] as? [[String: Any]]
        #expect(unread?.first?["unreadCount"] as? String == "1")
        #expect(try await bob.messages.unread([c.channelID]).first?.unreadCount == 0, "the CLI's read reached the server")
        bob.close()
    }

    @Test func theClientMakesListsAndDeletesWebhooksFromTheCommandLine() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (_, c) = try await guild(server, owner: alice, members: [])
        let token = server.token("alice", device: "cli")
        let made = try await waitForJSON(server: server, token: token, lines: [#"{"cmd":"webhook-create","channel":"\#(c.channelID)","name":"CI"}"#])
        let hook = try #require(made.first { $0["cmd"] as? String == "webhook-create" }?["result"] as? [String: Any], "\(made)")
        let id = try #require(hook["webhookId"] as? String)
        #expect((hook["path"] as? String)?.hasPrefix("/webhooks/\(c.channelID)/\(id)/") == true)
        let lines = try await waitForJSON(server: server, token: token, lines: [
            #"{"cmd":"webhooks","channel":"\#(c.channelID)"}"#,
            #"{"cmd":"webhook-delete","channel":"\#(c.channelID)","webhook":"\#(id)","reason":"done"}"#,
        ])
        #expect(lines.filter { $0["ok"] as? Bool == true }.count == 2, "\(lines)")
        let listed = (lines.first { $0["cmd"] as? String == "webhooks" }?["result"] as? [String: Any])?["webhooks"] as? [[String: Any]]
        #expect(listed?.map { $0["webhookId"] as? String } == [id] && listed?.first?["secret"] == nil)
        #expect(try await alice.webhooks.list(in: c.channelID).isEmpty)
    }

    @Test func theClientMakesChangesAndWritesToAGroupFromTheCommandLine() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (bob, bobEvents) = try await server.client("bob")
        let token = server.token("alice", device: "cli")
        let made = try await waitForJSON(server: server, token: token, lines: [#"{"cmd":"group-create","name":"CLI trio","users":"bob,carol"}"#])
        let group = try #require(made.first { $0["cmd"] as? String == "group-create" }?["result"] as? [String: Any], "\(made)")
        #expect(group["memberIds"] as? [String] == ["alice", "bob", "carol"] && group["isGroup"] as? Bool == true)
        let id = try #require(group["conversationId"] as? String)
        let lines = try await waitForJSON(server: server, token: token, lines: [
            #"{"cmd":"group-send","conversation":"\#(id)","text":"from the cli"}"#,
            #"{"cmd":"group-rename","conversation":"\#(id)","name":"Renamed"}"#,
            #"{"cmd":"group-add","conversation":"\#(id)","users":"dan"}"#,
            #"{"cmd":"group-remove","conversation":"\#(id)","user":"dan"}"#,
            #"{"cmd":"group-leave","conversation":"\#(id)"}"#,
            #"{"cmd":"dm-privacy","from":"server-mates"}"#,
            #"{"cmd":"dm-privacy","from":"friends"}"#,
        ])
        #expect(lines.filter { $0["ok"] as? Bool == true }.count == 6, "\(lines)")
        let privacy = try #require(lines.first { $0["cmd"] as? String == "dm-privacy" && $0["ok"] as? Bool == true }?["result"] as? [String: Any])
        #expect(privacy["serverMatesOnly"] as? Bool == true)
        #expect(lines.contains { $0["cmd"] as? String == "dm-privacy" && $0["ok"] as? Bool == false })
        _ = try await bobEvents.message { $0.body.text == "from the cli" }
        let held = try #require(try await bob.directs.list().first { $0.isGroup })
        #expect(held.name == "Renamed" && held.ownerID == "bob" && held.memberIds == ["bob", "carol"])
    }

    @Test func theClientRespondsToReceiptsAndSendsDirectMessagesFromTheCommandLine() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, aliceEvents) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        let m = try await alice.messages.send("read me", to: c.channelID, needReceipt: true)
        let lines = try await waitForJSON(server: server, token: server.token("bob", device: "cli"), lines: [
            #"{"cmd":"respond-receipts","channel":"\#(c.channelID)","uids":["\#(m.uid)"]}"#,
            #"{"cmd":"receipts","uids":["\#(m.uid)"]}"#,
            #"{"cmd":"dm","user":"alice","text":"psst"}"#,
            #"{"cmd":"dms"}"#,
        ])
        #expect(lines.filter { $0["ok"] as? Bool == true }.count == 4, "\(lines)")
        let info = ((lines.first { $0["cmd"] as? String == "receipts" }?["result"] as? [String: Any])?["receipts"] as? [[String: Any]])?.first
        #expect(info?["responded"] as? Bool == true)
        let receiptRequest = lines.first { $0["event"] as? String == "receipt_request" }
        #expect(receiptRequest != nil, "the CLI prints the receipt request it synced")
        #expect(try await alice.receipts.info([m.uid]).first?.readerCount == 1)
        let dm = try await aliceEvents.message { $0.body.text == "psst" }
        #expect(dm.senderID == "bob" && dm.recipientID == "alice")
        let status = try await waitForJSON(server: server, token: server.token("bob", device: "cli"), lines: [
            #"{"cmd":"sent-status","uids":["\#(dm.uid)"]}"#,
        ])
        let statuses = (status.first { $0["cmd"] as? String == "sent-status" }?["result"] as? [String: Any])?["statuses"] as? [[String: Any]]
        #expect(statuses?.first?["status"] as? String == "DELIVERED")
    }

    @Test func theFanoutBenchmarkRunsAndReportsEverySize() throws {
        let (rc, out) = try Binary.runLab(["bench", "members", "--members", "20,200", "--subscribers", "3", "--messages", "20", "--runs", "1", "--json"])
        #expect(rc == 0, "\(out)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])
        let results = try #require(report["results"] as? [[String: Any]])
        #expect(results.compactMap { $0["members"] as? Int } == [20, 200])
        #expect(results.allSatisfy { ($0["deliveries_per_s"] as? Double ?? 0) > 0 })
    }

    @Test func theLoadGeneratorDeliversEveryMessageInOrderWithNothingLost() throws {
        let (rc, out) = try Binary.runLab(["bench", "fanout", "--subscribers", "5", "--publishers", "2", "--messages", "200", "--json"])
        #expect(rc == 0, "\(out)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])
        let run = try #require((report["runs"] as? [[String: Any]])?.first)
        #expect(run["target"] as? String == "guildhall")
        #expect(run["deliveries"] as? Int == 2_000)
        #expect(run["lost"] as? Int == 0)
        #expect(run["out_of_order"] as? Int == 0)
        #expect(run["failure"] == nil)
    }

    /// `bench fanout --transport ws` runs the shape over TCP, WebSocket binary and JSON, and `--transport tls`
    /// over TCP and TLS (docs/performance.md), each delivering everything.
    @Test(arguments: [("ws", ["tcp", "ws", "ws-json"]), ("tls", ["tcp", "tls"])])
    func theTransportBenchmarksDeliverEveryMessageOverEachTransport(_ transport: String, _ expected: [String]) throws {
        let (rc, out) = try Binary.runLab(["bench", "fanout", "--subscribers", "5", "--publishers", "2", "--messages", "100", "--transport", transport, "--json"])
        #expect(rc == 0, "\(out)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])
        let runs = try #require(report["runs"] as? [[String: Any]])
        #expect(runs.compactMap { $0["transport"] as? String } == expected)
        for run in runs {
            #expect(run["deliveries"] as? Int == 1_000 && run["lost"] as? Int == 0 && run["out_of_order"] as? Int == 0, "\(run)")
            #expect(run["failure"] == nil)
        }
    }

    /// `bench cluster` (docs/cluster.md) delivers everything over three nodes, and
    /// the bytes it reports crossing NATS do not grow with the subscribers.
    @Test func theClusterBenchmarkReportsBytesAcrossNATSThatDoNotGrowWithSubscribers() throws {
        func report(_ subscribers: Int) throws -> [String: Any] {
            let arguments = ["bench", "cluster", "--subscribers", "\(subscribers)", "--messages", "100", "--rate", "100", "--json"]
            // Three nodes and NATS on a 2-core machine running the other tests
            // can miss the bench's deadlines (seen in CI, twice in a row once);
            // up to three tries, and every failed try's stderr says why.
            var (rc, out) = try Binary.runLab(arguments)
            var failures: [String] = []
            while rc != 0 && failures.count < 2 {
                failures.append(out)
                (rc, out) = try Binary.runLab(arguments)
            }
            #expect(rc == 0, "\((failures + [out]).joined(separator: "\n=== next try ===\n"))")
            return try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])
        }
        let small = try report(6), large = try report(30)
        #expect((small["runs"] as? [[String: Any]])?.count == 2)
        let perMessage = [small, large].map { $0["nats_bytes_per_message"] as? Double ?? 0 }
        #expect(perMessage[0] > 0 && perMessage[1] < perMessage[0] * 1.5, "bytes per message: \(perMessage)")
    }

    @Test func theSyncBenchmarkSyncsEveryItemToAFreshDevice() throws {
        let (rc, out) = try Binary.runLab(["bench", "sync", "--items", "450", "--package-size", "100", "--runs", "2", "--json"])
        #expect(rc == 0, "\(out)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])
        #expect(report["items"] as? Int == 450)
        #expect((report["median_ms"] as? Double ?? 0) > 0)
    }

    @Test func theReceiptsBenchmarkCountsReadersAndStoresOneRowPerAdvance() throws {
        let (rc, out) = try Binary.runLab(["bench", "receipts", "--members", "500", "--messages", "300", "--advances", "2", "--queries", "50", "--json"])
        #expect(rc == 0, "\(out)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])
        let rows = try #require(report["rows"] as? Int)
        #expect(rows > 0 && rows <= 1_000, "at most one row per member per advance")
        #expect((report["page_us_p50"] as? Double ?? -1) >= 0)
    }

    @Test func theStoreAndConnectionsBenchmarksReport() throws {
        let (rc, out) = try Binary.runLab(["bench", "store", "--publishers", "3", "--messages", "50", "--json"])
        #expect(rc == 0, "\(out)")
        let store = try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])
        #expect(store["sends"] as? Int == 150)
        let (rc2, out2) = try Binary.runLab(["bench", "connections", "--sessions", "20", "--json"])
        #expect(rc2 == 0)
        let conns = try #require(try JSONSerialization.jsonObject(with: Data(out2.utf8)) as? [String: Any])
        #expect(conns["sessions"] as? Int == 20)
        #expect((conns["logins_per_s"] as? Double ?? 0) > 0)
        let (rc3, out3) = try Binary.runLab(["bench", "search", "--messages", "3000", "--searches", "10", "--compare-messages", "1000", "--json"])
        #expect(rc3 == 0)
        let search = try #require(try JSONSerialization.jsonObject(with: Data(out3.utf8)) as? [String: Any])
        #expect(search["messages"] as? Int == 3000 && (search["hits_per_search"] as? Double ?? 0) > 0)
        #expect((search["index_bytes_per_message"] as? Double ?? 0) > 0 && (search["write_ratio"] as? Double ?? 0) > 0)
    }

    @Test func theClientSearchesFromTheCommandLine() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (g, c) = try await guild(server, owner: alice, members: [])
        _ = try await alice.messages.send("the 北京 harbour report", to: c.channelID)
        _ = try await alice.messages.send("nothing to see", to: c.channelID)
        let lines = try await waitForJSON(server: server, token: server.token("alice", device: "cli"), lines: [
            #"{"cmd":"search","server":"\#(g.serverID)","words":"harb* 北京"}"#,
            #"{"cmd":"search","server":"\#(g.serverID)","words":"\"see nothing\""}"#,
        ])
        let results = lines.filter { $0["cmd"] as? String == "search" }.map { ($0["result"] as? [String: Any])?["hits"] as? [[String: Any]] ?? [] }
        #expect(results.count == 2, "\(lines)")
        let found = results.first.map { $0.compactMap { (($0["message"] as? [String: Any])?["body"] as? [String: Any])?["text"] as? String } }
        #expect(found == ["the 北京 harbour report"])
        #expect(results.last?.isEmpty == true)
    }

    @Test func theClientSendsFilesFromTheCommandLine() async throws {
        let server = try TestServer { $0.wsListen = "127.0.0.1:0" }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, heard) = try await server.client("bob")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        let path = NSTemporaryDirectory() + "guildhall-cli-\(UUID().uuidString)-notes.txt"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data("the notes".utf8).write(to: URL(fileURLWithPath: path))
        _ = try await waitForJSON(server: server, token: server.token("alice", device: "cli"), lines: [
            #"{"cmd":"upload","channel":"\#(c.channelID)","path":"\#(path)","text":"see the notes","name":"notes.txt"}"#,
            #"{"cmd":"upload-dm","user":"bob","path":"\#(path)"}"#,
        ])
        let inChannel = try await heard.message { $0.body.text == "see the notes" }
        #expect(inChannel.attachments.map(\.filename) == ["notes.txt"] && inChannel.attachments[0].contentType == "text/plain")
        let direct = try await heard.message { $0.serverID == 0 && !$0.attachments.isEmpty }
        #expect(direct.attachments[0].size == 9 && direct.attachments[0].filename.hasSuffix("-notes.txt"))
        #expect(try Curl.run([direct.attachments[0].url]).body == Array("the notes".utf8))
    }

    @Test func theClientManagesRolesAndOperatesOnMessagesFromTheCommandLine() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        let m = try await alice.messages.send("vote here", to: c.channelID)
        let lines = try await waitForJSON(server: server, token: server.token("alice", device: "cli"), lines: [
            #"{"cmd":"create-role","server":"\#(g.serverID)","position":"2","name":"mods","allow":"kick,manage_channels"}"#,
            #"{"cmd":"grant-role","server":"\#(g.serverID)","user":"bob","role":"2"}"#,
            #"{"cmd":"override","server":"\#(g.serverID)","channel":"\#(c.channelID)","role":"2","deny":"mention"}"#,
            #"{"cmd":"permissions","server":"\#(g.serverID)","channel":"\#(c.channelID)","user":"bob"}"#,
            #"{"cmd":"react","channel":"\#(c.channelID)","uid":"\#(m.uid)","type":"3"}"#,
            #"{"cmd":"send","channel":"\#(c.channelID)","text":"in its thread","thread":"\#(m.uid)"}"#,
            #"{"cmd":"recall","channel":"\#(c.channelID)","uid":"\#(m.uid)"}"#,
        ])
        #expect(lines.filter { $0["ok"] as? Bool == true }.count == 7, "\(lines)")
        let granted = (lines.first { $0["cmd"] as? String == "permissions" }?["result"] as? [String: Any])?["granted"] as? String
        let bits = UInt64(granted ?? "") ?? 0
        #expect(bits & GHPermission.kick.bits != 0 && bits & GHPermission.mention.bits == 0)
        #expect(try await bob.roles.list(of: g.serverID).roles.contains { $0.name == "mods" })
        _ = try await bobEvents.update(.recalledMessage, of: m.uid)
        #expect(try await bob.messages.thread(m.uid, in: c.channelID).messages.map(\.body.text) == ["in its thread"])
    }

    @Test func theAdminCommandsDriveTheAdminEndpointAndRestoreInstallsABackup() throws {
        let server = try TestServer {
            $0.adminListen = "127.0.0.1:0"
            $0.adminToken = "op-secret"
        }
        defer { server.stop() }
        let admin = "127.0.0.1:\(server.adminPort)"
        let (statusRC, status) = try Binary.run(["admin", "status", "--admin", admin])
        #expect(statusRC == 0 && status.contains("readyz: 200"), "\(status)")
        #expect(try Binary.run(["health", "--admin", admin]).0 == 0)
        #expect(try Binary.run(["admin", "settings", "--admin", admin, "--token", "wrong"]).0 != 0)
        let (setRC, _) = try Binary.run(["admin", "set", "small-server-threshold=5", "--admin", admin, "--token", "op-secret"])
        #expect(setRC == 0)
        let (listRC, list) = try Binary.run(["admin", "settings", "--admin", admin, "--token", "op-secret"])
        #expect(listRC == 0 && list.contains("small-server-threshold = 5") && list.contains("from admin"))
        let (backupRC, backup) = try Binary.run(["admin", "backup", "--admin", admin, "--token", "op-secret", "--json"])
        let path = (try? JSONSerialization.jsonObject(with: Data(backup.utf8)) as? [String: Any])?["path"] as? String
        #expect(backupRC == 0 && path != nil, "\(backup)")
        let target = NSTemporaryDirectory() + "guildhall-restored-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: target) }
        #expect(try Binary.run(["restore", path ?? "", "--data", target]).0 == 0)
        #expect(FileManager.default.fileExists(atPath: target + "/guildhall.db"))
        #expect(try Binary.run(["restore", path ?? "", "--data", target]).0 != 0, "never over a database")
    }

    /// Runs `guildhall client --json` with `lines` on stdin; returns every JSON object it printed.
    func waitForJSON(server: TestServer, token: String, lines: [String]) async throws -> [[String: Any]] {
        let (rc, out) = try Binary.run(["client", "--server", "127.0.0.1:\(server.port)", "--token", token, "--json"],
                                       input: lines.joined(separator: "\n") + "\n")
        #expect(rc == 0)
        return out.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }
}
