// The operator's HTTP endpoint (docs/operating.md): its own listener (`admin-listen`,
// never the client port), on the first loop. Requests are read by Debian's
// http_parser (`HTTPRequestReader`) with a size limit, a header limit and a
// read deadline; each connection answers one request and closes. A bearer
// token (`admin-token`) guards everything but /healthz and /readyz. What
// takes time (a backup; settings applied on the other loops) runs off the
// loop and answers through the loop's inbox (`LoopMessage.adminAnswer`).
// First loop only.

import Foundation
import GuildhallCore
import GuildhallLoop
import GuildhallStore

/// A setting's value in a PUT body: a string, number or boolean, as the settings' text.
struct SettingText: Decodable {
    let text: String

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let b = try? c.decode(Bool.self) { text = b ? "true" : "false" } else if let i = try? c.decode(Int64.self) {
            text = String(i)
        } else {
            text = try c.decode(String.self)
        }
    }
}

/// An answer, made on any thread.
struct AdminAnswer: Sendable {
    let status: Int
    let contentType: String
    let body: [UInt8]

    static func json(_ status: Int, _ object: Any) -> AdminAnswer {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return AdminAnswer(status: status, contentType: "application/json", body: Array(data) + [10])
    }

    static func error(_ status: Int, _ message: String) -> AdminAnswer { json(status, ["error": message]) }

    static func text(_ status: Int, _ text: String, type: String = "text/plain; charset=utf-8") -> AdminAnswer {
        AdminAnswer(status: status, contentType: type, body: Array(text.utf8))
    }
}

final class AdminEndpoint {
    static let maxRequestBytes = 64 * 1024
    static let maxHeaders = 64
    static let readDeadlineMs: UInt64 = 5_000
    /// A loop whose last liveness sweep is older than this is not turning.
    static let stalledAfterMs: UInt64 = 10_000

    private unowned let node: Node
    private var listener: TCPListener?
    private var open: [UInt64: (connection: TCPConnection, reader: HTTPRequestReader, since: UInt64, answered: Bool)] = [:]
    private var nextID: UInt64 = 0
    private let deadlines: LoopTimer
    /// Loop time the endpoint started: loops that have not swept yet count from here.
    private let started: UInt64

    private var first: NodeLoop { node.first }

    init(node: Node, host: String, port: Int) throws {
        self.node = node
        deadlines = LoopTimer(loop: node.first.loop)
        started = node.first.loop.nowMillis
        listener = try TCPListener(loop: node.first.loop, host: host, port: port) { [unowned self] in self.accepted($0) }
        deadlines.start(afterMillis: 1_000, repeatMillis: 1_000) { [unowned self] in self.expire() }
    }

    var port: Int { listener?.port ?? 0 }

    func close() {
        listener?.close()
        listener = nil
        deadlines.close()
        for (_, c) in open { c.connection.abort() }
        open.removeAll()
    }

    // MARK: Connections

    private func accepted(_ connection: TCPConnection) {
        nextID += 1
        let id = nextID
        open[id] = (connection, HTTPRequestReader(maxRequestBytes: Self.maxRequestBytes, maxHeaders: Self.maxHeaders), first.loop.nowMillis, false)
        connection.onRead = { [unowned self] bytes in self.received(bytes, on: id) }
        connection.onEnd = { [unowned self] _ in self.open.removeValue(forKey: id)?.connection.abort() }
        if first.home.settings.tlsAdmin == "on" {
            guard let tls = node.guards.certificates.stream() else { return open.removeValue(forKey: id)?.connection.abort() ?? () }
            connection.startTLS(tls, early: UnsafeRawBufferPointer(start: nil, count: 0))
        }
        connection.startReading()
    }

    private func received(_ bytes: UnsafeRawBufferPointer, on id: UInt64) {
        guard let c = open[id], !c.answered else { return }
        do {
            guard let request = try c.reader.feed(bytes).first else { return }
            open[id]?.answered = true
            c.connection.stopReading()
            handle(request, on: id)
        } catch {
            open[id]?.answered = true
            answer(id, .error(error.status, "\(error)"))
        }
    }

    /// Connections that did not send a whole request in time get 408.
    private func expire() {
        let now = first.loop.nowMillis
        for (id, c) in open where !c.answered && now >= c.since + Self.readDeadlineMs {
            open[id]?.answered = true
            answer(id, .error(408, "the request did not arrive within \(Self.readDeadlineMs) ms"))
        }
    }

    /// Writes the answer and closes (called on the first loop, also for answers made elsewhere).
    func answer(_ id: UInt64, _ a: AdminAnswer) {
        guard let c = open.removeValue(forKey: id) else { return }
        let head = "HTTP/1.1 \(a.status) \(Self.reason(a.status))\r\nContent-Type: \(a.contentType)\r\n"
            + "Content-Length: \(a.body.count)\r\nConnection: close\r\n\r\n"
        c.connection.enqueue(Array(head.utf8) + a.body)
        c.connection.close()
    }

    // MARK: Routes

    private func handle(_ r: HTTPRequest, on id: UInt64) {
        let route = (r.method, r.path)
        let open = r.path == "/healthz" || r.path == "/readyz"
        if !open, !authorized(r) {
            return answer(id, .error(401, "this endpoint needs the admin token: Authorization: Bearer <admin-token>"))
        }
        switch route {
        case ("GET", "/healthz"): answer(id, health())
        case ("GET", "/readyz"): answer(id, readiness())
        case ("GET", "/settings"): answer(id, .json(200, settingsTable()))
        case ("GET", "/metrics"):
            let body = node.guards.metrics.exposition(connections: node.guards.connections.current, storeQueueDepth: node.store.writer.queueDepth,
                                                      walPath: node.store.path + "-wal",
                                                      cluster: node.leases.map { ClusterReadiness(leases: $0, log: node.shardLog) })
            answer(id, AdminAnswer(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: body))
        case ("PUT", "/settings"): changeSettings(r.body, id: id)
        case ("DELETE", let path) where path.hasPrefix("/settings/"): dropOverride(String(path.dropFirst("/settings/".count)), id: id)
        case ("POST", "/backup"): backup(id: id)
        case ("GET", "/cluster"): answer(id, r.query("guild") != nil || r.query("user") != nil ? placement(r) : cluster())
        case ("POST", "/tls/reload"): answer(id, reloadCertificate())
        case ("POST", "/drain"):
            // Answered once every loop's sessions are closed and their last writes committed.
            if !first.beginDrain(answering: id) { answer(id, .error(409, "the node is already draining or shutting down")) }
        case (_, "/healthz"), (_, "/readyz"), (_, "/settings"), (_, "/backup"), (_, "/drain"), (_, "/metrics"), (_, "/cluster"), (_, "/tls/reload"):
            answer(id, .error(405, "\(r.method) is not allowed on \(r.path)"))
        default:
            answer(id, .error(404, "no endpoint \(r.path); see docs/operating.md"))
        }
    }

    private func authorized(_ r: HTTPRequest) -> Bool {
        let token = first.home.settings.adminToken
        guard !token.isEmpty else { return true }
        guard let value = r.header("Authorization"), value.hasPrefix("Bearer ") else { return false }
        return Self.sameBytes(Array(value.dropFirst(7).utf8), Array(token.utf8))
    }

    private static func sameBytes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in a.indices { diff |= a[i] ^ b[i] }
        return diff == 0
    }

    /// 200 while every loop turns.
    private func health() -> AdminAnswer {
        let now = first.loop.nowMillis
        let sweeps = node.guards.metrics.loops.withLock { $0.map(\.lastSweep) }
        let stalled = sweeps.indices.filter { now > max(sweeps[$0], started) + Self.stalledAfterMs }
        guard stalled.isEmpty else { return .text(503, "loops not turning: \(stalled.map(String.init).joined(separator: ","))\n") }
        return .text(200, "ok\n")
    }

    /// 200 when the store is open, the listeners accept and the node is not
    /// draining; in a cluster also when NATS is reachable, the leases are
    /// renewed in time and every shard the node holds is caught up and served.
    private func readiness() -> AdminAnswer {
        if first.gateway.shuttingDown { return .text(503, "draining\n") }
        if let leases = node.leases, let problem = ClusterReadiness(leases: leases, log: node.shardLog).problem {
            return .text(503, "not ready: \(problem)\n")
        }
        return .text(200, "ready\n")
    }

    private func settingsTable() -> [String: Any] {
        let s = first.home.settings
        var table: [String: Any] = [:]
        let defaults = Settings()
        for spec in Settings.specs {
            let value = ["secret", "admin-token", "s3-secret-key"].contains(spec.key) ? (spec.get(s).isEmpty ? "" : "(set)") : spec.get(s)
            table[spec.key] = ["value": value, "default": spec.key == "loops" ? Settings.defaultLoopsText : spec.get(defaults), "live": spec.live,
                               "source": s.sources[spec.key] ?? "default"] as [String: Any]
        }
        return table
    }

    /// PUT /settings {key: value}: every key checked first; then the changes
    /// are kept in the data folder's override file (SettingsLayers.swift) and the
    /// live ones applied on every loop before the answer. Nothing changes when
    /// the file cannot be written.
    private func changeSettings(_ body: [UInt8], id: UInt64) {
        guard let changes = try? JSONDecoder().decode([String: SettingText].self, from: Data(body)) else {
            return answer(id, .error(400, "the body must be a JSON object of setting keys and values"))
        }
        let current = first.home.settings
        var newer = current
        var overrides: [String: String]
        do { overrides = try current.adminOverrides() } catch { return answer(id, .error(500, error.description)) }
        for (key, setting) in changes.sorted(by: { $0.key < $1.key }) {
            guard let spec = Settings.spec(key) else { return answer(id, .error(400, "unknown setting \"\(key)\"")) }
            do { try newer.override(key, setting.text) } catch { return answer(id, .error(400, "\(key): \(error.description)")) }
            if !spec.live, spec.get(newer) != spec.get(current) {
                return answer(id, .error(409, "\(key) needs a restart; nothing was changed"))
            }
            overrides[key] = spec.get(newer)
        }
        keepThenApply(overrides, newer, id: id, answer: ["applied": changes.keys.sorted()])
    }

    /// DELETE /settings/<key>: drops the admin's override; the value file, environment and flags give comes back.
    private func dropOverride(_ key: String, id: UInt64) {
        guard Settings.spec(key) != nil else { return answer(id, .error(404, "unknown setting \"\(key)\"")) }
        let current = first.home.settings
        var overrides: [String: String]
        do { overrides = try current.adminOverrides() } catch { return answer(id, .error(500, error.description)) }
        guard overrides.removeValue(forKey: key) != nil else { return answer(id, .error(404, "\(key) has no override set through this endpoint")) }
        var newer = current
        newer.dropOverride(key)
        keepThenApply(overrides, newer, id: id, answer: ["dropped": key, "value": newer.value(key) ?? "", "source": newer.sources[key] ?? "default"])
    }

    /// Writes the override file off the loop (it waits on fsync), then applies `newer` on every loop, then answers.
    private func keepThenApply(_ overrides: [String: String], _ newer: Settings, id: UInt64, answer body: [String: Any]) {
        let inboxes = node.inboxes
        let reply = AdminAnswer.json(200, body)
        NamedThread.start("gh-admin") {
            do throws(SettingsError) { try newer.saveAdminOverrides(overrides) } catch {
                _ = inboxes[0].post(.adminAnswer(id, .error(503, "\(error.description); nothing was changed")))
                return
            }
            let applied = DispatchGroup()
            for inbox in inboxes {
                applied.enter()
                if !inbox.post(.settings(newer, applied)) { applied.leave() }
            }
            applied.notify(queue: .global()) { _ = inboxes[0].post(.adminAnswer(id, reply)) }
        }
    }

    /// GET /cluster: the live nodes, the shards each owns, and this node's
    /// lease ages with each shard's last log entry (the stream sequence it
    /// appends after) and whether it serves the shard now.
    private func cluster() -> AdminAnswer {
        guard let leases = node.leases else { return .error(404, "this node is not in a cluster (the setting cluster is empty)") }
        let s = leases.snapshot, now = ShardLeases.nowMs()
        var byNode: [String: [Int]] = [:]
        for (shard, owner) in s.owners { byNode[String(owner), default: []].append(shard) }
        let nodes = s.nodes.keys.sorted().map { id -> [String: Any] in
            ["node": id, "shards": (byNode[String(id)] ?? []).sorted(), "last_seen_ms_ago": now - (s.nodes[id] ?? now)]
        }
        // Only leases this node still serves: a renewal overdue by ¾ of the TTL no longer counts (ShardLeases.owns).
        let logged = node.shardLog?.positions ?? [:]
        let ages = s.held.keys.sorted().filter { leases.owns($0) }.map { shard -> [String: Any] in
            ["shard": shard, "lease_age_ms": now - s.held[shard]!.renewedAt, "log_seq": logged[shard] ?? 0, "serving": logged[shard] != nil]
        }
        return .json(200, ["node": first.home.settings.nodeID, "shards": first.home.settings.shards, "nodes": nodes, "leases": ages,
                           "last_error": s.lastError])
    }

    /// GET /cluster?guild=<id> or ?user=<id>: the shard it lives in
    /// (ShardPlan), the node that owns that shard now, and whether this node serves it.
    private func placement(_ r: HTTPRequest) -> AdminAnswer {
        guard let leases = node.leases else { return .error(404, "this node is not in a cluster (the setting cluster is empty)") }
        let shards = first.home.settings.shards
        let shard: Int
        var answer: [String: Any]
        if let guild = r.query("guild") {
            guard let id = UInt64(guild), id != 0 else { return .error(400, "guild must be a server id (a decimal number)") }
            shard = ShardPlan.shard(guild: id, shards: shards)
            answer = ["guild": guild]
        } else {
            let user = r.query("user") ?? ""
            if let problem = Validation.userIDProblem(user) { return .error(400, "user: \(problem)") }
            shard = ShardPlan.shard(user: user, shards: shards)
            answer = ["user": user]
        }
        answer["shard"] = shard
        answer["owner"] = leases.snapshot.owners[shard] ?? NSNull()
        answer["served_here"] = leases.owns(shard) && node.shardLog?.positions[shard] != nil
        return .json(200, answer)
    }

    /// POST /tls/reload: reads the certificate files again; connections made from now on present the new one.
    private func reloadCertificate() -> AdminAnswer {
        let settings = first.home.settings
        guard settings.speaksTLS else { return .error(409, "no listener speaks TLS (tls-client, tls-websocket, tls-admin)") }
        do throws(SettingsError) { try node.guards.certificates.load(settings) } catch {
            return .error(500, "\(error.description); the certificate in use stays")
        }
        return .json(200, ["reloaded": settings.tlsCertFile])
    }

    /// POST /backup: a consistent copy, made off the loop.
    private func backup(id: UInt64) {
        let store = node.store, inbox = node.inboxes[0]
        NamedThread.start("gh-admin") {
            let answer: AdminAnswer
            do throws(StoreError) {
                let r = try store.backup()
                answer = .json(200, ["path": r.path, "bytes": r.bytes, "last_message_uid": String(r.lastMessageUID)])
            } catch {
                answer = .error(500, "backup failed: \(error.message)")
            }
            _ = inbox.post(.adminAnswer(id, answer))
        }
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}
