// What a cluster node does when its leases change (docs/cluster.md): a shard
// gained is caught up from its log and fenced (ShardLog.adopt), its guilds
// and users are loaded from the store into the homes, and only then is it
// served; a shard lost stops taking writes at once, the homes forget its
// guilds and the sessions of its users are closed with DRAINING, so their
// clients reconnect to a node that serves them. Runs on the lease thread;
// reaches the loops through their inboxes and waits for them to load.

import Dispatch
import Foundation
import GuildhallCore
import GuildhallLoop
import GuildhallStore
import Synchronization

final class ShardTakeover: ShardHandover {
    private let shardLog: ShardLog
    private let store: Store
    private let settings: Settings
    private let clock: @Sendable () -> UInt64
    private let served: ServedShards
    /// The loops' inboxes once the homes exist (before that, the node loads what the first round gained).
    private let inboxes = Mutex<[LoopInbox<LoopMessage>]>([])

    init(shardLog: ShardLog, store: Store, settings: Settings, served: ServedShards, clock: @escaping @Sendable () -> UInt64) {
        self.shardLog = shardLog
        self.store = store
        self.settings = settings
        self.served = served
        self.clock = clock
        shardLog.onBroken.withLock { $0 = { [weak self] shard in self?.lost([shard]) } }
    }

    /// Held shards the log stopped taking writes for (an append went
    /// unanswered): they are handed over to this node again, from the log.
    func stalled(among held: [Int]) -> [Int] {
        let appending = shardLog.served
        return held.filter { !appending.contains($0) }
    }

    /// The homes are built: later changes go to them.
    func homesRunning(_ inboxes: [LoopInbox<LoopMessage>]) { self.inboxes.withLock { $0 = inboxes } }

    func gained(_ shards: [Int], keepAlive: () -> Void) -> [Int] {
        var taken: [Int: UInt64] = [:]
        for shard in shards {
            if let g = shardLog.adopt(shard, keepAlive: keepAlive) { taken[shard] = g }
            keepAlive()
        }
        let ready = taken.keys.sorted()
        guard !ready.isEmpty else { return [] }
        let loops = inboxes.withLock { $0 }
        if !loops.isEmpty {
            do {
                var snapshot = try Node.snapshot(of: store, settings: settings, clock: clock).only(shards: Set(ready), of: settings.shards)
                snapshot.generations = taken
                let shares = snapshot.shares(HomeMap(settings))
                let loaded = DispatchGroup()
                for (inbox, share) in zip(loops, shares) {
                    loaded.enter()
                    if !inbox.post(.adoptShards(share, loaded)) { loaded.leave() }
                }
                _ = loaded.wait(timeout: .now() + .seconds(10))
            } catch {
                for shard in ready { shardLog.release(shard) }
                return []
            }
        }
        served.add(ready)
        return ready
    }

    func ownersChanged(_ shards: Set<Int>) {
        for inbox in inboxes.withLock({ $0 }) { _ = inbox.post(.guildsMoved(shards)) }
    }

    func moved(_ shards: [Int]) {
        for inbox in inboxes.withLock({ $0 }) { _ = inbox.post(.homesMoved(Set(shards))) }
    }

    func lost(_ shards: [Int]) {
        guard !shards.isEmpty else { return }
        served.remove(shards)
        for shard in shards { shardLog.release(shard) }
        for inbox in inboxes.withLock({ $0 }) { _ = inbox.post(.dropShards(Set(shards))) }
    }
}

/// The shards this node serves now, for the gateways (a login whose user
/// another node serves is sent on). Without a cluster, every user is served.
final class ServedShards: Sendable {
    let count: Int
    let clustered: Bool
    private let shards = Mutex<Set<Int>>([])

    init(settings: Settings) {
        count = settings.shards
        clustered = !settings.cluster.isEmpty
    }

    func add(_ list: [Int]) { shards.withLock { $0.formUnion(list) } }
    func remove(_ list: [Int]) { shards.withLock { $0.subtract(list) } }
    var all: Set<Int> { shards.withLock { $0 } }

    /// Whether this node serves the shard a guild's id hashes to (so do its
    /// channels' and, for a conversation, its lower user's; `Home.newID`).
    func serves(id: UInt64) -> Bool {
        guard clustered else { return true }
        let shard = ShardPlan.shard(guild: id, shards: count)
        return shards.withLock { $0.contains(shard) }
    }

    func serves(user: UserID) -> Bool {
        guard clustered else { return true }
        let shard = ShardPlan.shard(user: user, shards: count)
        return shards.withLock { $0.contains(shard) }
    }
}

extension StoreSnapshot {
    /// What of the snapshot belongs to `shards` (of `count`): their guilds
    /// with everything in them, and the conversations of their users.
    func only(shards: Set<Int>, of count: Int) -> StoreSnapshot {
        func keeps(_ guild: ServerID) -> Bool { shards.contains(ShardPlan.shard(guild: guild, shards: count)) }
        var out = StoreSnapshot()
        out.highestID = highestID
        out.highestInboxOrd = highestInboxOrd
        out.recentClientSends = recentClientSends
        out.servers = servers.filter { keeps($0.id) }
        out.members = members.filter { keeps($0.serverID) }
        out.invites = invites.filter { keeps($0.serverID) }
        out.inviteCodes = inviteCodes.filter { keeps($0.serverID) }
        out.timeouts = timeouts.filter { keeps($0.serverID) }
        out.bans = bans.filter { keeps($0.serverID) }
        out.roles = roles.filter { keeps($0.serverID) }
        out.overrides = overrides.filter { keeps($0.serverID) }
        out.channels = channels.filter { keeps($0.serverID) }
        let kept = Set(out.channels.map(\.id))
        out.readPositions = readPositions.filter { kept.contains($0.1) }
        out.receivedSeqs = receivedSeqs.filter { kept.contains($0.1) }
        out.pins = pins.filter { kept.contains($0.channelID) }
        out.webhooks = webhooks.filter { shards.contains(ShardPlan.shard(guild: $0.serverID, shards: count)) }
        out.recentMentions = recentMentions.filter { kept.contains($0.1) }
        out.receiptRequests = receiptRequests.filter { kept.contains($0.0) }
        out.receiptAdvances = receiptAdvances.filter { kept.contains($0.0) }
        out.conversations = conversations.filter { shards.contains(ShardPlan.shard(of: $0, shards: count)) }
        out.presences = presences.filter { shards.contains(ShardPlan.shard(user: $0.0, shards: count)) }
        out.profiles = profiles.filter { shards.contains(ShardPlan.shard(user: $0.user, shards: count)) }
        out.blocks = blocks.filter { shards.contains(ShardPlan.shard(conversationOf: $0.0, $0.1, shards: count)) }
        out.serverMatesOnly = serverMatesOnly.filter { shards.contains(ShardPlan.shard(user: $0, shards: count)) }
        out.pushRegistrations = pushRegistrations.filter { shards.contains(ShardPlan.shard(user: $0.user, shards: count)) }
        return out
    }
}
