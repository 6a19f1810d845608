// What every loop of a cluster node needs to know about the others (
// docs/cluster.md): which node owns each shard and how many loops each live node has
// (from the lease round, ShardLeases), so a gateway or home can tell the
// place (Place.swift) of any guild's, channel's, conversation's or user's
// home. Without a cluster, every home is a loop of this node. Written by
// the lease thread, read by the loops.

import Foundation
import GuildhallCore
import Synchronization

final class ClusterView: Sendable {
    struct State: Sendable {
        /// Shard -> owning node.
        var owners: [Int: Int] = [:]
        /// Live node -> its loops.
        var loops: [Int: Int] = [:]
        /// Node -> its process's life (wall-clock ms at its start), as its heartbeat says: a change
        /// means the node started again, whether or not a round saw it gone.
        var lives: [Int: UInt64] = [:]
    }

    let me: Int
    let shards: Int
    let clustered: Bool
    let localMap: HomeMap
    /// This node's life (wall-clock ms at its start): its heartbeat's, and its gateways'
    /// in each login they send a home (Reception.followNodes).
    let life = UInt64(Date().timeIntervalSince1970 * 1000)
    private let state = Mutex(State())

    init(settings: Settings) {
        me = settings.nodeID
        shards = settings.shards
        clustered = !settings.cluster.isEmpty
        localMap = HomeMap(settings)
        state.withLock { $0.loops[settings.nodeID] = settings.loops }
    }

    /// A round's view. A node whose heartbeat could not be read this round
    /// keeps its last known loop count while it is live or owns shards: a
    /// broadcast or a gather that skipped it would be silently incomplete.
    func update(owners: [Int: Int], loops: [Int: Int], live: Set<Int>, lives: [Int: UInt64] = [:]) {
        state.withLock { s in
            let keep = live.union(owners.values)
            var merged = s.loops.merging(loops) { _, new in new }
            merged = merged.filter { keep.contains($0.key) }
            s.owners = owners
            s.loops = merged
            s.loops[me] = localMap.loops
            s.lives = s.lives.merging(lives) { _, new in new }.filter { keep.contains($0.key) }
        }
    }

    var snapshot: State { state.withLock { $0 } }

    /// The place of the home of the shard `shard`'s id `home` (its loop there), nil while no node owns it.
    private func place(shard: Int, loop: (HomeMap) -> Int) -> Int? {
        guard clustered else { return loop(localMap) }
        let (owner, loops) = state.withLock { s in (s.owners[shard], s.owners[shard].flatMap { s.loops[$0] }) }
        guard let owner else { return nil }
        if owner == me { return loop(localMap) }
        return Place.remote(node: owner, loop: loop(HomeMap(loops: loops ?? 1, shards: shards)))
    }

    /// The place of a guild's home (or a channel's or conversation's, whose ids share its shard).
    func place(guild id: UInt64) -> Int? {
        place(shard: ShardPlan.shard(guild: id, shards: shards)) { $0.home(guild: id) }
    }

    func place(user: UserID) -> Int? {
        place(shard: ShardPlan.shard(user: user, shards: shards)) { $0.home(user: user) }
    }

    /// Every loop of every other live node, as places.
    var remotePlaces: [Int] {
        guard clustered else { return [] }
        return state.withLock { s in
            s.loops.filter { $0.key != me }.sorted { $0.key < $1.key }.flatMap { node, n in (0..<n).map { Place.remote(node: node, loop: $0) } }
        }
    }
}

extension HomeMap {
    /// This node's map: in a cluster, homes follow shards.
    init(_ settings: Settings) {
        self.init(loops: settings.loops, shards: settings.cluster.isEmpty ? nil : settings.shards)
    }
}
