// Shard ownership in a cluster (docs/cluster.md): leases in a
// JetStream key-value bucket. Each round (`lease-renew-ms`) the node
// heartbeats its own key, counts the live nodes, renews every lease it holds
// with compare-and-set on the revision, claims free shards up to its share
// with create (which fails when another node holds the key), and releases a
// few when above its share. A lease it could not renew for `lease-ttl-ms`
// minus a margin is no longer served: `owns(shard)` says so before the bucket's
// TTL would let another node claim it. cnats' KV calls block, so all of this
// runs on a control thread of its own, never on a loop; the loops read the
// published state. A shard claimed is served only once the handover made
// it servable (the node caught up from its log and fenced the previous
// owner, ShardLog.swift); one lost or given back is handed over at once.

import CNATS
import Foundation
import GuildhallCore
import Synchronization

/// What the node does when it gains or loses shards (Node's ShardTakeover).
protocol ShardHandover: Sendable {
    /// Shards just claimed: makes each servable; returns those that are (the
    /// others are given back). Catching up may take long: it calls `keepAlive`
    /// now and then, which renews the leases held meanwhile.
    func gained(_ shards: [Int], keepAlive: () -> Void) -> [Int]
    /// Shards no longer held.
    func lost(_ shards: [Int])
    /// Of the shards held, those no longer servable (to take over again).
    func stalled(among held: [Int]) -> [Int]
    /// Shards whose owner changed this round (gained, lost, or moved between
    /// others), told once the cluster view shows the new owners: requests
    /// and subscriptions for their guilds go to the new owners.
    func ownersChanged(_ shards: Set<Int>)
    /// Shards that moved between other nodes (or lost their owner): this
    /// node's sessions whose user homes were there must log in again.
    func moved(_ shards: [Int])
}

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
        /// Monotonic ms at the end of the last round (0: none yet).
        var lastRoundAt: UInt64 = 0
    }

    let settings: Settings
    private let state = Mutex(State())
    private let stopping = Atomic<Bool>(false)
    /// Entered while the rounds' thread runs: every `stop` waits for it.
    private let running = DispatchGroup()
    private let log: ServerLog
    private let client: LeaseClient
    /// Where every home is, for the loops (ClusterView.swift).
    private let view: ClusterView?
    private let started = Atomic<Bool>(false)
    /// This process's life, in its heartbeat (wall-clock ms at its start): a node that restarts
    /// between two of another's rounds keeps its id and may claim its shards back at once, and
    /// only this tells the others that the homes they registered sessions with are gone.
    /// The view's (`ClusterView.life`, which its gateways' logins name too); a view-less test's own.
    private let incarnation: UInt64

    /// Connects; throws when NATS or JetStream is not there.
    init(settings: Settings, log: ServerLog, view: ClusterView? = nil) throws {
        self.settings = settings
        self.log = log
        self.view = view
        incarnation = view?.life ?? UInt64(Date().timeIntervalSince1970 * 1000)
        client = try LeaseClient(settings: settings)
    }

    private let firstBeats = Mutex<[Int: String]>([:])

    /// Runs the first round on the calling thread, so the node starts with its share served.
    func firstRound(_ handover: any ShardHandover) {
        var lastBeats: [Int: String] = [:]
        round(client, &lastBeats, handover)
        let beats = lastBeats
        firstBeats.withLock { $0 = beats }
    }

    /// Runs the later rounds on a thread of their own (once the homes can take shards on).
    func startRounds(_ handover: any ShardHandover) {
        started.store(true, ordering: .relaxed)
        let beats = firstBeats.withLock { $0 }
        running.enter()
        NamedThread.start("gh-leases") { [self, client] in
            self.run(client, beats, handover)
            client.close()
            self.running.leave()
        }
    }

    /// Leaves the cluster (the shards given back, the heartbeat gone) and
    /// waits until it has. Called again (a drain left already, then
    /// shutdown), it only waits for the first.
    func stop() {
        let first = !stopping.exchange(true, ordering: .relaxed)
        if started.load(ordering: .relaxed) { running.wait() } else if first { client.close() }
    }

    /// Whether this node serves `shard` now: it renewed the lease recently enough that no other node can hold it.
    func owns(_ shard: Int) -> Bool {
        let now = Self.nowMs()
        let margin = UInt64(settings.leaseTTLMs) * 3 / 4
        return state.withLock { $0.held[shard].map { now < $0.renewedAt + margin } ?? false }
    }

    var snapshot: State { state.withLock { $0 } }

    /// Whether the lease connection to NATS is up.
    var isConnected: Bool { client.isConnected }

    /// Whether the rounds keep their pace: the last one ended within a lease TTL.
    var roundsOnTime: Bool {
        let last = state.withLock { $0.lastRoundAt }
        return last != 0 && Self.nowMs() < last + UInt64(settings.leaseTTLMs)
    }

    static func nowMs() -> UInt64 { DispatchTime.now().uptimeNanoseconds / 1_000_000 }

    // MARK: Rounds

    private func run(_ client: LeaseClient, _ beats: [Int: String], _ handover: any ShardHandover) {
        var lastBeats = beats
        while !stopping.load(ordering: .relaxed) {
            round(client, &lastBeats, handover)
            var slept = 0
            while slept < settings.leaseRenewMs, !stopping.load(ordering: .relaxed) {
                usleep(20_000)
                slept += 20
            }
        }
        // Leaving: give the shards back so others take them at once (when NATS can still be reached).
        let held = state.withLock { s in defer { s.held.removeAll() }; return Array(s.held.keys) }
        handover.lost(held)
        guard client.isConnected else { return }
        for shard in held { client.delete("shard.\(shard)") }
        client.delete("node.\(settings.nodeID)")
    }

    /// Renews the leases held whose last renewal is older than `olderThan` ms
    /// (by default a renewal period), between the steps of a long takeover.
    private func renewHeld(_ client: LeaseClient, olderThan: Int? = nil) {
        let now = Self.nowMs(), me = settings.nodeID, age = UInt64(olderThan ?? settings.leaseRenewMs)
        for (shard, h) in state.withLock({ $0.held }) where now >= h.renewedAt + age && client.isConnected {
            guard let rev = client.update("shard.\(shard)", "\(me)", last: h.revision) else { continue }
            state.withLock { $0.held[shard] = Held(revision: rev, renewedAt: now) }
        }
    }

    private func round(_ client: LeaseClient, _ lastBeats: inout [Int: String], _ handover: any ShardHandover) {
        let now = Self.nowMs()
        let me = settings.nodeID
        guard client.isConnected else {
            // Nothing can be renewed: serve nothing rather than wait for the TTL.
            let dropped = state.withLock { s in
                defer { s.held.removeAll(); s.lastError = "NATS unreachable; holding no shard" }
                return Array(s.held.keys)
            }
            if !dropped.isEmpty {
                log.warn("NATS unreachable: shards given up", ["shards": dropped.count])
                handover.lost(dropped)
            }
            return
        }
        // The heartbeat carries the node's loop count: other nodes place homes by it.
        client.put("node.\(me)", "\(now) \(settings.loops) \(incarnation)")
        var loopsOf: [Int: Int] = [:]
        var nodes = state.withLock { $0.nodes }
        var beating: Set<Int> = []
        var taken: Set<Int> = []
        var owners: [Int: Int] = [:]
        // Nodes started again since the last round (the heartbeat's third field, its life, changed).
        var restarted: Set<Int> = [], lives: [Int: UInt64] = [:]
        for key in client.keys() {
            if key.hasPrefix("node."), let id = Int(key.dropFirst(5)), let beat = client.get(key)?.value {
                beating.insert(id)
                let life = { (beat: String) in beat.split(separator: " ").dropFirst(2).first }
                if let last = lastBeats[id], let was = life(last), let now = life(beat), was != now { restarted.insert(id) }
                lives[id] = life(beat).flatMap { UInt64($0) }
                if lastBeats[id] != beat || nodes[id] == nil { nodes[id] = now }
                lastBeats[id] = beat
                loopsOf[id] = beat.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 1
            } else if key.hasPrefix("shard."), let s = Int(key.dropFirst(6)), let owner = client.get(key).flatMap({ Int($0.value) }) {
                taken.insert(s)
                owners[s] = owner
            }
        }
        // A node whose heartbeat has not changed for a TTL is gone (its keys expire with the bucket's TTL too);
        // one whose heartbeat key is gone left at once (it deletes the key as it leaves: a drain, a shutdown),
        // as far as the listing can be trusted: it holds this node's own heartbeat, put just now.
        let listed = beating.contains(me)
        nodes = nodes.filter { $0.key == me || (now < $0.value + UInt64(settings.leaseTTLMs) && (!listed || beating.contains($0.key))) }
        nodes[me] = now
        var held = state.withLock { $0.held }
        var lost: [Int] = []
        for (shard, h) in held where client.isConnected {
            if let rev = client.update("shard.\(shard)", "\(me)", last: h.revision) {
                held[shard] = Held(revision: rev, renewedAt: now)
            } else if now >= h.renewedAt + UInt64(settings.leaseTTLMs) * 3 / 4
                        || client.get("shard.\(shard)").map({ $0.value != "\(me)" }) == true {
                // Lost: another node holds the key, or the renewal is too old to count. A renewal
                // that merely failed (NATS electing a leader) is tried again next round.
                log.warn("lease lost", ["shard": shard])
                held.removeValue(forKey: shard)
                lost.append(shard)
            }
        }
        let released = ShardPlan.toRelease(held: Set(held.keys), shards: settings.shards, nodes: nodes.count)
        // Handed over before the key goes, so the next owner's first entry fences nothing of ours in flight.
        handover.lost(lost + released)
        for shard in released {
            client.delete("shard.\(shard)")
            held.removeValue(forKey: shard)
        }
        var given = lost + released, gained: [Int] = []
        // A shard whose log stopped taking writes is taken over again, as if claimed anew.
        let stalled = handover.stalled(among: Array(held.keys))
        if !stalled.isEmpty {
            state.withLock { $0.held = held }
            let back = Set(handover.gained(stalled) { self.renewHeld(client) })
            held = state.withLock { $0.held }
            for shard in stalled where !back.contains(shard) {
                client.delete("shard.\(shard)")
                held.removeValue(forKey: shard)
                given.append(shard)
            }
        }
        var claimed: [Int: Held] = [:]
        for shard in ShardPlan.toClaim(held: Set(held.keys), taken: taken, shards: settings.shards, nodes: nodes.count, node: me)
            where client.isConnected {
            if let rev = client.create("shard.\(shard)", "\(me)") { claimed[shard] = Held(revision: rev, renewedAt: now) }
        }
        if !claimed.isEmpty {
            // Held meanwhile (renewed while catching up), served only once the handover says so (ShardLog.append takes only shards it caught up).
            state.withLock { $0.held = held.merging(claimed) { a, _ in a } }
            let servable = Set(handover.gained(claimed.keys.sorted()) { self.renewHeld(client) })
            renewHeld(client, olderThan: 0)
            held = state.withLock { $0.held }
            for shard in claimed.keys where !servable.contains(shard) {
                client.delete("shard.\(shard)")
                held.removeValue(forKey: shard)
            }
            gained = servable.sorted()
        }
        if !given.isEmpty || !gained.isEmpty {
            log.info("shards changed hands", ["taken": gained.description, "given_up": given.sorted().description, "held": held.keys.sorted().description])
        }
        for (shard, _) in held { owners[shard] = me }
        let before = state.withLock { $0.owners }
        // A shard whose owner started again moved too, from the old life's homes to the new one's.
        let moved = before.filter { shard, owner in owner != me && (owners[shard] != owner || restarted.contains(owner)) }.map(\.key)
        // A node that owns shards counts for routing even when its heartbeat is late (a busy round).
        view?.update(owners: owners, loops: loopsOf, live: Set(nodes.keys), lives: lives)
        if !moved.isEmpty { handover.moved(moved.sorted()) }
        let changed = Set(before.keys).union(owners.keys).filter { before[$0] != owners[$0] || owners[$0].map(restarted.contains) == true }
        if !changed.isEmpty { handover.ownersChanged(changed) }
        let fixedNodes = nodes, fixedHeld = held, error = client.lastError, fixedOwners = owners
        state.withLock {
            $0.held = fixedHeld
            $0.nodes = fixedNodes
            $0.owners = fixedOwners
            $0.lastError = error
            $0.lastRoundAt = Self.nowMs()
        }
    }
}

/// The lease bucket through cnats' blocking KV calls (control thread only).
final class LeaseClient: @unchecked Sendable {  // used by the lease thread alone after init
    private let link: ClusterConnection
    private var bucket: OpaquePointer?
    private(set) var lastError = ""

    init(settings: Settings) throws {
        link = try ClusterConnection(settings: settings, role: "leases")
        var cfg = kvConfig()
        kvConfig_Init(&cfg)
        let name = strdup("gh-leases-\(settings.clusterName)")
        defer { free(name) }
        cfg.Bucket = UnsafePointer(name)
        cfg.History = 1
        cfg.TTL = Int64(settings.leaseTTLMs) * 1_000_000  // nanoseconds (docs/cluster.md)
        cfg.Replicas = Int32(settings.clusterReplicas)
        var s = NATS_OK
        // NATS servers started together answer before JetStream has elected its leader: wait for it a little.
        let deadline = ShardLeases.nowMs() + 10_000
        repeat {
            s = js_CreateKeyValue(&bucket, link.jetStream, &cfg)
            if s != NATS_OK { s = js_KeyValue(&bucket, link.jetStream, name) }
            if s != NATS_OK { usleep(250_000) }
        } while s != NATS_OK && ShardLeases.nowMs() < deadline
        guard s == NATS_OK else {
            link.close()
            throw SettingsError(description: "cannot open the lease bucket: \(Self.text(s)) \(ClusterConnection.lastErrorText())")
        }
    }

    var isConnected: Bool { link.isConnected }

    func close() {
        if let bucket { kvStore_Destroy(bucket) }
        bucket = nil
        link.close()
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
        // Bounded: without a timeout the listing waits for ever when NATS goes away mid-call.
        var opts = kvWatchOptions()
        kvWatchOptions_Init(&opts)
        opts.Timeout = 1_000
        guard kvStore_Keys(&list, bucket, &opts) == NATS_OK else { return [] }
        defer { kvKeysList_Destroy(&list) }
        return (0..<Int(list.Count)).compactMap { list.Keys[$0].map { String(cString: $0) } }
    }

    private func note(_ s: natsStatus) { if s != NATS_OK { lastError = Self.text(s) } }

    static func text(_ s: natsStatus) -> String { ClusterConnection.text(s) }
}
