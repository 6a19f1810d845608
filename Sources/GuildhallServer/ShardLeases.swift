// Shard ownership in a cluster (issue 15 §2, CLUSTER §3): leases in a
// JetStream key-value bucket. Each round (`lease-renew-ms`) the node
// heartbeats its own key, counts the live nodes, renews every lease it holds
// with compare-and-set on the revision, claims free shards up to its share
// with create (which fails when another node holds the key), and releases a
// few when above its share. A lease it could not renew for `lease-ttl-ms`
// minus a margin is no longer served: `owns(shard)` says so before the bucket's
// TTL would let another node claim it. cnats' KV calls block, so all of this
// runs on a control thread of its own, never on a loop; the loops read the
// published state. Step 1 of the cluster: ownership only (no data plane yet).

import CNATS
import Foundation
import GuildhallCore
import Synchronization

final class ShardLeases: Sendable {
    struct Held: Sendable {
        var revision: UInt64
        /// Monotonic ms of the last successful claim or renewal.
        var renewedAt: UInt64
    }

    struct State: Sendable {
        var held: [Int: Held] = [:]
        /// Live nodes by id, with the monotonic ms this node last saw their heartbeat change.
        var nodes: [Int: UInt64] = [:]
        /// Every shard's owner as the bucket said at the last round.
        var owners: [Int: Int] = [:]
        var lastError = ""
    }

    let settings: Settings
    private let state = Mutex(State())
    private let stopping = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private let log: ServerLog

    /// Connects and starts the rounds; throws when NATS or JetStream is not there.
    init(settings: Settings, log: ServerLog) throws {
        self.settings = settings
        self.log = log
        let client = try LeaseClient(settings: settings)
        let thread = Thread { [self] in
            self.run(client)
            client.close()
            self.done.signal()
        }
        thread.name = "guildhall-leases"
        thread.start()
    }

    func stop() {
        stopping.store(true, ordering: .relaxed)
        done.wait()
    }

    /// Whether this node serves `shard` now: it renewed the lease recently enough that no other node can hold it.
    func owns(_ shard: Int) -> Bool {
        let now = Self.nowMs()
        let margin = UInt64(settings.leaseTTLMs) * 3 / 4
        return state.withLock { $0.held[shard].map { now < $0.renewedAt + margin } ?? false }
    }

    var snapshot: State { state.withLock { $0 } }

    static func nowMs() -> UInt64 { DispatchTime.now().uptimeNanoseconds / 1_000_000 }

    // MARK: Rounds

    private func run(_ client: LeaseClient) {
        var lastBeats: [Int: String] = [:]
        while !stopping.load(ordering: .relaxed) {
            round(client, &lastBeats)
            var slept = 0
            while slept < settings.leaseRenewMs, !stopping.load(ordering: .relaxed) {
                usleep(20_000)
                slept += 20
            }
        }
        // Leaving: give the shards back so others take them at once (when NATS can still be reached).
        guard client.isConnected else { return }
        for shard in state.withLock({ Array($0.held.keys) }) { client.delete("shard.\(shard)") }
        client.delete("node.\(settings.nodeID)")
    }

    private func round(_ client: LeaseClient, _ lastBeats: inout [Int: String]) {
        let now = Self.nowMs()
        let me = settings.nodeID
        guard client.isConnected else {
            // Nothing can be renewed: serve nothing rather than wait for the TTL.
            let dropped = state.withLock { s in
                defer { s.held.removeAll(); s.lastError = "NATS unreachable; holding no shard" }
                return s.held.count
            }
            if dropped > 0 { log.warn("NATS unreachable: shards given up", ["shards": dropped]) }
            return
        }
        client.put("node.\(me)", "\(now)")
        var nodes = state.withLock { $0.nodes }
        var taken: Set<Int> = []
        var owners: [Int: Int] = [:]
        for key in client.keys() {
            if key.hasPrefix("node."), let id = Int(key.dropFirst(5)), let beat = client.get(key)?.value {
                if lastBeats[id] != beat || nodes[id] == nil { nodes[id] = now }
                lastBeats[id] = beat
            } else if key.hasPrefix("shard."), let s = Int(key.dropFirst(6)), let owner = client.get(key).flatMap({ Int($0.value) }) {
                taken.insert(s)
                owners[s] = owner
            }
        }
        // A node whose heartbeat has not changed for a TTL is gone (its keys expire with the bucket's TTL too).
        nodes = nodes.filter { $0.key == me || now < $0.value + UInt64(settings.leaseTTLMs) }
        nodes[me] = now
        var held = state.withLock { $0.held }
        for (shard, h) in held where client.isConnected {
            if let rev = client.update("shard.\(shard)", "\(me)", last: h.revision) {
                held[shard] = Held(revision: rev, renewedAt: now)
            } else {
                log.warn("lease lost", ["shard": shard])
                held.removeValue(forKey: shard)
            }
        }
        for shard in ShardPlan.toRelease(held: Set(held.keys), shards: settings.shards, nodes: nodes.count) {
            client.delete("shard.\(shard)")
            held.removeValue(forKey: shard)
        }
        for shard in ShardPlan.toClaim(held: Set(held.keys), taken: taken, shards: settings.shards, nodes: nodes.count, node: me)
            where client.isConnected {
            if let rev = client.create("shard.\(shard)", "\(me)") { held[shard] = Held(revision: rev, renewedAt: now) }
        }
        for (shard, _) in held { owners[shard] = me }
        let fixedNodes = nodes, fixedHeld = held, error = client.lastError, fixedOwners = owners
        state.withLock {
            $0.held = fixedHeld
            $0.nodes = fixedNodes
            $0.owners = fixedOwners
            $0.lastError = error
        }
    }
}

/// The lease bucket through cnats' blocking KV calls (control thread only).
final class LeaseClient: @unchecked Sendable {  // used by the lease thread alone after init
    private var connection: OpaquePointer?
    private var jetStream: OpaquePointer?
    private var bucket: OpaquePointer?
    private(set) var lastError = ""

    init(settings: Settings) throws {
        var opts: OpaquePointer?
        guard natsOptions_Create(&opts) == NATS_OK else { throw SettingsError(description: "cannot make NATS options") }
        defer { natsOptions_Destroy(opts) }
        let urls = settings.cluster.split(separator: ",").map { strdup(String($0)) }
        defer { urls.forEach { free($0) } }
        var pointers: [UnsafePointer<CChar>?] = urls.map { UnsafePointer($0) }
        _ = natsOptions_SetServers(opts, &pointers, Int32(pointers.count))
        _ = natsOptions_SetName(opts, "guildhall-\(settings.nodeID)")
        _ = natsOptions_SetTimeout(opts, 2_000)
        var s = natsConnection_Connect(&connection, opts)
        guard s == NATS_OK else { throw SettingsError(description: "cannot reach NATS at \(settings.cluster): \(Self.text(s))") }
        // KV calls fail within a second rather than JetStream's default five, so a round stays short.
        var jsOpts = jsOptions()
        jsOptions_Init(&jsOpts)
        jsOpts.Wait = 1_000
        s = natsConnection_JetStream(&jetStream, connection, &jsOpts)
        guard s == NATS_OK else { throw SettingsError(description: "no JetStream: \(Self.text(s))") }
        var cfg = kvConfig()
        kvConfig_Init(&cfg)
        let name = strdup("gh-leases-\(settings.clusterName)")
        defer { free(name) }
        cfg.Bucket = UnsafePointer(name)
        cfg.History = 1
        cfg.TTL = Int64(settings.leaseTTLMs) * 1_000_000  // nanoseconds (CLUSTER §3)
        cfg.Replicas = Int32(settings.clusterReplicas)
        s = js_CreateKeyValue(&bucket, jetStream, &cfg)
        if s != NATS_OK { s = js_KeyValue(&bucket, jetStream, name) }
        guard s == NATS_OK else { throw SettingsError(description: "cannot open the lease bucket: \(Self.text(s)) \(Self.lastErrorText())") }
    }

    var isConnected: Bool { connection.map { natsConnection_Status($0) == NATS_CONN_STATUS_CONNECTED } ?? false }

    func close() {
        if let bucket { kvStore_Destroy(bucket) }
        if let jetStream { jsCtx_Destroy(jetStream) }
        if let connection { natsConnection_Destroy(connection) }
        bucket = nil; jetStream = nil; connection = nil
    }

    func put(_ key: String, _ value: String) {
        var rev: UInt64 = 0
        note(kvStore_PutString(&rev, bucket, key, value))
    }

    /// The new revision, or nil when the key exists (another node holds it).
    func create(_ key: String, _ value: String) -> UInt64? {
        var rev: UInt64 = 0
        return kvStore_CreateString(&rev, bucket, key, value) == NATS_OK ? rev : nil
    }

    /// The new revision, or nil when the key moved on since `last` (or the call failed).
    func update(_ key: String, _ value: String, last: UInt64) -> UInt64? {
        var rev: UInt64 = 0
        let s = kvStore_UpdateString(&rev, bucket, key, value, last)
        note(s)
        return s == NATS_OK ? rev : nil
    }

    func delete(_ key: String) { note(kvStore_Delete(bucket, key)) }

    func get(_ key: String) -> (value: String, revision: UInt64)? {
        var entry: OpaquePointer?
        guard kvStore_Get(&entry, bucket, key) == NATS_OK, let entry else { return nil }
        defer { kvEntry_Destroy(entry) }
        return (kvEntry_ValueString(entry).map { String(cString: $0) } ?? "", kvEntry_Revision(entry))
    }

    func keys() -> [String] {
        var list = kvKeysList()
        guard kvStore_Keys(&list, bucket, nil) == NATS_OK else { return [] }
        defer { kvKeysList_Destroy(&list) }
        return (0..<Int(list.Count)).compactMap { list.Keys[$0].map { String(cString: $0) } }
    }

    private func note(_ s: natsStatus) { if s != NATS_OK { lastError = Self.text(s) } }

    static func text(_ s: natsStatus) -> String { natsStatus_GetText(s).map { String(cString: $0) } ?? "status \(s.rawValue)" }

    static func lastErrorText() -> String { nats_GetLastError(nil).map { String(cString: $0) } ?? "" }
}
