// The admin endpoint (docs/operating.md) through a real HTTP client on
// 127.0.0.1: health and readiness, auth, settings read and changed live,
// online backup and its restore, and bad, oversize and garbage requests.

import Foundation
import GuildhallClient
@testable import GuildhallServer
import GuildhallStore
import GuildhallWire
import Testing

/// One HTTP exchange over a plain socket: what the server answered, and whether it closed.
struct HTTPExchange {
    let status: Int
    let headers: [String: String]
    let body: String

    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:] }

    static func send(_ raw: [UInt8], port: Int) throws -> HTTPExchange {
        let c = try RawConnection(port: port)
        c.send(raw)
        let text = c.readAllUntilClosed(timeout: 10)
        guard let headEnd = text.range(of: "\r\n\r\n") else { return HTTPExchange(status: 0, headers: [:], body: text) }
        let head = text[..<headEnd.lowerBound].split(separator: "\r\n")
        let status = head.first.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return HTTPExchange(status: status, headers: headers, body: String(text[headEnd.upperBound...]))
    }

    static func request(_ method: String, _ path: String, port: Int, token: String? = nil, body: String = "") throws -> HTTPExchange {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        head += "Content-Length: \(body.utf8.count)\r\n\r\n"
        return try send(Array((head + body).utf8), port: port)
    }
}

@Suite struct AdminEndpointTests {
    func adminServer(_ tweak: @escaping (inout Settings) throws -> Void = { _ in }) throws -> TestServer {
        try TestServer {
            $0.adminListen = "127.0.0.1:0"
            $0.adminToken = "op-secret"
            try tweak(&$0)
        }
    }

    @Test func healthAndReadinessAnswerWithoutTheTokenAndEverythingElseNeedsIt() throws {
        let server = try adminServer()
        defer { server.stop() }
        let port = server.adminPort
        #expect(port != 0 && port != server.port, "its own listener, never the client port")
        #expect(try HTTPExchange.request("GET", "/healthz", port: port).status == 200)
        #expect(try HTTPExchange.request("GET", "/readyz", port: port).status == 200)
        #expect(try HTTPExchange.request("GET", "/settings", port: port).status == 401)
        #expect(try HTTPExchange.request("GET", "/settings", port: port, token: "wrong").status == 401)
        #expect(try HTTPExchange.request("GET", "/settings", port: port, token: "op-secret").status == 200)
        #expect(try HTTPExchange.request("GET", "/nowhere", port: port, token: "op-secret").status == 404)
        #expect(try HTTPExchange.request("DELETE", "/settings", port: port, token: "op-secret").status == 405)
    }

    @Test func badOversizeAndGarbageRequestsGetTheirStatusAndTheServerLivesOn() throws {
        let server = try adminServer()
        defer { server.stop() }
        let port = server.adminPort
        #expect(try HTTPExchange.send(Array("\u{16}\u{03}\u{01} garbage\r\n\r\n".utf8), port: port).status == 400)
        let big = "PUT /settings HTTP/1.1\r\nContent-Length: 100000\r\n\r\n" + String(repeating: "x", count: 70_000)
        #expect(try HTTPExchange.send(Array(big.utf8), port: port).status == 413)
        let headers = "GET /healthz HTTP/1.1\r\n" + (0..<100).map { "X-\($0): 1\r\n" }.joined() + "\r\n"
        #expect(try HTTPExchange.send(Array(headers.utf8), port: port).status == 431)
        #expect(try HTTPExchange.request("GET", "/healthz", port: port).status == 200)
    }

    @Test func settingsListEveryKeyWithItsValueDefaultLivenessAndSource() throws {
        let server = try adminServer()
        defer { server.stop() }
        let table = try HTTPExchange.request("GET", "/settings", port: server.adminPort, token: "op-secret").json
        #expect(table.count == Settings.specs.count)
        let threshold = table["small-server-threshold"] as? [String: Any]
        #expect(threshold?["value"] as? String == "2000" && threshold?["default"] as? String == "2000")
        #expect(threshold?["live"] as? Bool == true && threshold?["source"] as? String == "default")
        #expect((table["admin-token"] as? [String: Any])?["value"] as? String == "(set)", "secrets are not shown")
        #expect((table["listen"] as? [String: Any])?["live"] as? Bool == false)
    }

    /// A live setting changed over HTTP applies on every loop before the
    /// answer, and the next message follows it; a restart-only one is 409;
    /// an unknown key or a bad value 400; nothing is half-applied.
    @Test func aLiveSettingChangedOverHTTPTakesEffectOnTheNextMessage() async throws {
        let server = try adminServer { try $0.set("small-server-threshold", "100") }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, heard) = try await server.client("bob")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        let small = try await alice.messages.send("small server: bob hears it", to: c.channelID)
        _ = try await heard.message { $0.uid == small.uid }
        let port = server.adminPort
        let refused = try HTTPExchange.request("PUT", "/settings", port: port, token: "op-secret",
                                               body: #"{"small-server-threshold": 1, "listen": "127.0.0.1:1"}"#)
        #expect(refused.status == 409 && refused.body.contains("listen"))
        #expect(try HTTPExchange.request("PUT", "/settings", port: port, token: "op-secret", body: #"{"no-such-key": 1}"#).status == 400)
        #expect(try HTTPExchange.request("PUT", "/settings", port: port, token: "op-secret",
                                         body: #"{"small-server-threshold": 1, "rate-messages": "many"}"#).status == 400)
        let before = try HTTPExchange.request("GET", "/settings", port: port, token: "op-secret").json
        #expect((before["small-server-threshold"] as? [String: Any])?["value"] as? String == "100", "nothing of a refused change applied")

        let applied = try HTTPExchange.request("PUT", "/settings", port: port, token: "op-secret", body: #"{"small-server-threshold": 1}"#)
        #expect(applied.status == 200 && (applied.json["applied"] as? [String]) == ["small-server-threshold"], "\(applied)")
        let large = try await alice.messages.send("large now: bob is not subscribed", to: c.channelID)
        let mark = try await alice.messages.send("@bob mark", to: c.channelID, mentions: ["bob"])
        _ = try await heard.message { $0.uid == mark.uid }
        #expect(!heard.messages.contains { $0.uid == large.uid })
        let after = try HTTPExchange.request("GET", "/settings", port: port, token: "op-secret").json
        #expect((after["small-server-threshold"] as? [String: Any])?["source"] as? String == "admin")
    }

    /// An online backup while clients send holds every message acknowledged
    /// before its last UID; restored into an empty folder, it serves them.
    @Test func aBackupTakenWhileClientsSendRestoresEveryAcknowledgedMessage() async throws {
        let server = try adminServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let g = try await alice.servers.create(name: "Busy")
        let c = try await alice.channels.create(in: g.serverID, name: "c")
        let senders = try await withThrowingTaskGroup(of: GuildhallClient.self) { group in
            for n in 0..<10 { group.addTask { try await server.client("s\(n)").0 } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for s in senders { _ = try await s.servers.join(g.serverID) }
        let acknowledged = Locked<[UInt64]>([])
        let sending = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for s in senders {
                    group.addTask {
                        for i in 0..<40 {
                            let m = try await s.messages.send("m\(i)", to: c.channelID)
                            acknowledged.withLock { $0.append(m.uid) }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        _ = try await waitFor("some sends") { acknowledged.withLock { $0.count } >= 50 ? true : nil }
        let backup = try HTTPExchange.request("POST", "/backup", port: server.adminPort, token: "op-secret")
        try await sending.value
        #expect(backup.status == 200)
        let path = try #require(backup.json["path"] as? String)
        let last = UInt64(backup.json["last_message_uid"] as? String ?? "") ?? 0
        #expect((backup.json["bytes"] as? Int ?? 0) > 0 && last != 0)
        let expected = acknowledged.withLock { $0 }.filter { $0 <= last }
        #expect(expected.count >= 50)

        let restored = NSTemporaryDirectory() + "guildhall-restore-\(UUID().uuidString)"
        try Store.restore(path, into: restored)
        #expect(throws: StoreError.self) { try Store.restore(path, into: restored) }
        let again = try TestServer({ _ in }, folder: restored)
        defer { again.stop() }
        let (reader, _) = try await again.client("alice", device: "restored")
        var found: [UInt64] = []
        var after: UInt64 = 0
        while true {
            let page = try await reader.messages.history(of: c.channelID, after: after, limit: 100)
            found += page.messages.map(\.uid)
            guard page.moreAvailable, let tail = page.messages.last else { break }
            after = tail.seq
        }
        #expect(Set(expected).isSubset(of: Set(found)), "every message acknowledged before the backup's last UID")
    }

    @Test func aReachableAdminAddressWithoutATokenIsRefusedAtStart() {
        #expect(throws: (any Error).self) {
            _ = try TestServer {
                $0.adminListen = "0.0.0.0:0"
                $0.adminToken = ""
            }
        }
    }

    /// POST /drain: stop accepting, close every session with DRAINING, finish
    /// commits, answer, and stay up (not ready) until told to stop.
    @Test func drainClosesSessionsWithAReasonAndStaysUpNotReady() async throws {
        let server = try adminServer()
        let (alice, _) = try await server.client("alice")
        let g = try await alice.servers.create(name: "G")
        let c = try await alice.channels.create(in: g.serverID, name: "c")
        let m = try await alice.messages.send("before the drain", to: c.channelID)
        let bob = try RawConnection(port: server.port)
        #expect(bob.loginAndSync(server.token("bob")) != nil)
        let held = try HTTPExchange.request("GET", "/metrics", port: server.adminPort, token: "op-secret")
        #expect(Self.metric(held.body, "guildhall_connections") == 2)
        let drained = try HTTPExchange.request("POST", "/drain", port: server.adminPort, token: "op-secret")
        #expect(drained.status == 200 && drained.json["drained"] as? Bool == true)
        #expect(bob.framesUntilClosed(timeout: 5).closeReasons == [.draining])
        #expect(try HTTPExchange.request("GET", "/readyz", port: server.adminPort).status == 503)
        #expect(try HTTPExchange.request("POST", "/drain", port: server.adminPort, token: "op-secret").status == 409)
        // The port is free now: a connection is refused, or reaches whatever took the port since
        // (a parallel test's server), never this node.
        if let late = try? RawConnection(port: server.port) {
            _ = late.loginAndSync(server.token("carol"))
            let metrics = try HTTPExchange.request("GET", "/metrics", port: server.adminPort, token: "op-secret")
            #expect(Self.metric(metrics.body, "guildhall_connections") == 0, "a drained node accepts nobody")
        }
        #expect(server.stop() == 0, "a drained node still stops cleanly")
        let again = try TestServer({ _ in }, folder: server.folder)
        defer { again.stop() }
        let (reader, _) = try await again.client("alice", device: "after")
        #expect(try await reader.messages.history(of: c.channelID).messages.map(\.uid) == [m.uid])
    }

    /// A metric's value in the text exposition (0 when absent).
    static func metric(_ text: String, _ name: String) -> Double {
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.split(separator: " ").last ?? "") ?? 0
        }
        return 0
    }

    /// A quiet server commits a lone send on its loop (inline-commit-max);
    /// under synchronous=FULL, where every commit waits on fsync, never.
    @Test func loopsCommitThemselvesOnlyWhenCommitsDoNotWaitOnFsync() async throws {
        for synchronous in ["NORMAL", "FULL"] {
            let server = try adminServer { try $0.set("synchronous", synchronous) }
            defer { server.stop() }
            let (alice, _) = try await server.client("alice")
            let (_, c) = try await guild(server, owner: alice, members: [])
            for i in 0..<10 { _ = try await alice.messages.send("quiet \(i)", to: c.channelID) }
            let e = try HTTPExchange.request("GET", "/metrics", port: server.adminPort, token: "op-secret")
            let onLoop = Self.metric(e.body, "guildhall_jobs_committed_on_loop_total")
            #expect(synchronous == "FULL" ? onLoop == 0 : onLoop > 0, "\(synchronous): \(onLoop) jobs committed on a loop")
        }
    }

    /// Counters follow what the test did: 10 sends raise stored messages by
    /// 10, an error by its code, a slow consumer's cut its cause by exactly 1.
    @Test func metricsCountWhatHappened() async throws {
        let server = try adminServer {
            try $0.set("small-server-threshold", "100")
            // Above one burst (50 sends of 8 KB), so only the stalled session reaches it.
            try $0.set("outbound-hard-cap-bytes", "1048576")
            $0.wsListen = "127.0.0.1:0"
        }
        defer { server.stop() }
        func scrape() throws -> String {
            let e = try HTTPExchange.request("GET", "/metrics", port: server.adminPort, token: "op-secret")
            #expect(e.status == 200 && e.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
            return e.body
        }
        let (alice, _) = try await server.client("alice")
        let (bob, heard) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        let before = try scrape()
        #expect(before.contains("# HELP guildhall_messages_stored_total") && before.contains("# TYPE guildhall_commit_latency_seconds histogram"))
        var last: UInt64 = 0
        for i in 0..<10 { last = try await alice.messages.send("m\(i)", to: c.channelID).uid }
        _ = try await heard.message { $0.uid == last }
        await expectError(.notFound) { _ = try await bob.messages.send("nowhere", to: 42) }
        // Asked of every home (no one knows the channel), answered and counted once.
        await expectError(.notFound) { _ = try await bob.messages.history(of: 43) }
        let after = try scrape()
        let stored = #"guildhall_messages_stored_total{kind="channel"}"#
        #expect(Self.metric(after, stored) - Self.metric(before, stored) == 10)
        #expect(Self.metric(after, "guildhall_deliveries_total") - Self.metric(before, "guildhall_deliveries_total") >= 10)
        #expect(Self.metric(after, #"guildhall_errors_total{code="404"}"#) - Self.metric(before, #"guildhall_errors_total{code="404"}"#) == 2)
        #expect(Self.metric(after, "process_resident_memory_bytes") > 0 && Self.metric(after, "process_open_fds") > 0)
        // jemalloc is the process's malloc: it saw the server's allocations (glibc's would leave its figures at 0).
        #expect(Self.metric(after, "guildhall_allocator_allocated_bytes") > 1_000_000)
        #expect(Self.metric(after, "guildhall_allocator_resident_bytes") > 0)
        #expect(Self.metric(after, "process_start_time_seconds") > 1_700_000_000 && Self.metric(after, "process_cpu_seconds_total") > 0)
        try await waitUntil("the sweep's session count") { Self.metric(try scrape(), "guildhall_sessions") == 2 }
        #expect(Self.metric(after, "guildhall_logins_total") == 2)
        #expect(Self.metric(try scrape(), #"guildhall_sessions_by_phase{phase="live",transport="tcp"}"#) == 2)
        // A browser's session counts under its own transport.
        let browser = try WebSocketPeer(port: server.webSocketPort, json: true)
        #expect(browser.handshake().hasPrefix("HTTP/1.1 101 "))
        #expect(browser.login(server.token("carol"))?.userID == "carol")
        try await waitUntil("the WebSocket session counted") {
            Self.metric(try scrape(), #"guildhall_sessions_by_phase{phase="live",transport="websocket"}"#) == 1
        }
        #expect(Self.metric(try scrape(), #"guildhall_sessions_by_phase{phase="live",transport="tcp"}"#) == 2)
        for name in ["guildhall_wal_bytes", "guildhall_sync_packages_total", #"guildhall_loop_busy_seconds_total{loop="0"}"#] {
            #expect(after.contains(name + " "), "\(name)")
        }
        #expect(Self.metric(try scrape(), #"guildhall_loop_busy_seconds_total{loop="0"}"#) > 0, "the loop worked, and its sweep said so")

        // A member whose connection stops reading is cut once, as a slow consumer.
        let (carol, _) = try await server.client("carol")
        _ = try await carol.servers.join(g.serverID)
        let slow = try RawConnection(port: server.port, receiveBuffer: 4096)
        #expect(slow.loginAndSync(server.token("carol", device: "stalled")) != nil)
        let blob: GHMessageBody = {
            var b = GHMessageBody()
            b.custom.type = "blob"
            b.custom.data = Data(repeating: 7, count: 8_000)
            return b
        }()
        let causes = ["hard_cap", "soft_cap", "stall", "total_cap"].map { #"guildhall_slow_consumer_cuts_total{cause=""# + $0 + #""}"# }
        func cuts(_ text: String) -> Double { causes.reduce(0) { $0 + Self.metric(text, $1) } }
        // Bursts of 50 at once: more than the cap queues within one loop turn.
        for _ in 0..<12 {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<50 { group.addTask { _ = try await alice.messages.send(blob, to: c.channelID) } }
                try await group.waitForAll()
            }
        }
        try await waitUntil("the cut counted") { cuts(try scrape()) >= 1 }
        #expect(cuts(try scrape()) == 1, "exactly one cut")
        let bad = try RawConnection(port: server.port)
        bad.login(String(server.token("mallory").dropLast(4) + "AAAA"))
        #expect(bad.framesUntilClosed(timeout: 5).closeReasons == [.authFailed])
        let final = try scrape()
        #expect(Self.metric(final, #"guildhall_login_failures_total{reason="signature"}"#) == 1)
        #expect(Self.metric(final, #"guildhall_closes_total{reason="auth_failed"}"#) == 1)
    }

    /// A request that does not arrive whole within the read deadline (5 s) gets 408.
    @Test func aRequestThatNeverCompletesGets408AtTheReadDeadline() throws {
        let server = try adminServer()
        defer { server.stop() }
        let c = try RawConnection(port: server.adminPort)
        c.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n".utf8))
        let answer = c.readAllUntilClosed(timeout: 15)
        #expect(answer.hasPrefix("HTTP/1.1 408"), "\(answer)")
    }
}
