// What every part of a home shares and none owns: the settings, log and
// clock, the sessions, the runner, the directory, the id generator and the
// metrics. A part holds this and the few other parts it calls, never the
// whole home (docs/architecture.md); the home holds it too and forwards its
// old names here. Loop thread only.

import GuildhallCore
import GuildhallLoop
import GuildhallStore

final class HomeServices {
    /// Which loop the home is on.
    let index: Int
    var settings: Settings
    let log: ServerLog
    let clock: @Sendable () -> UInt64
    let loop: EventLoop
    /// The other loops (LoopLinks.swift), and which home owns what.
    let links: LoopLinks
    let map: HomeMap
    /// The loop's own gateway (set once it is built): its sessions, and in a cluster which node serves what.
    unowned var gateway: Gateway!
    /// The sessions and the interest index of who is online (shared with the gateway).
    let registry = SessionRegistry()
    let metrics: NodeMetrics
    var directory = Directory()
    /// Who subscribed to what (SubscriptionBook): read by delivery, typing, unread and permission changes.
    var book = SubscriptionBook()
    /// Users' read positions and mentions per channel (what unread numbers are made of).
    var positions = ReadPositions()
    var ids: UIDGenerator
    /// Client ids of recent sends, for de-duplication (Resends.swift).
    var recentSends = RecentSends()
    /// Commits, reads, the inbox and the live copies of addressed items (set once the home is built).
    var runner: EffectRunner!

    init(index: Int, settings: Settings, log: ServerLog, clock: @escaping @Sendable () -> UInt64, loop: EventLoop, links: LoopLinks,
         metrics: NodeMetrics) {
        self.index = index
        self.settings = settings
        self.log = log
        self.clock = clock
        self.loop = loop
        self.links = links
        map = HomeMap(settings)
        self.metrics = metrics
        ids = UIDGenerator(node: UInt64(settings.nodeID), lane: index, lanes: settings.loops)
    }

    func now() -> UInt64 { clock() }

    /// Where a user's home is: a loop here, or (in a cluster) a loop of the node owning its shard.
    /// While no node owns it, this node's loop (whose writes for it the log then refuses).
    func place(user: UserID) -> Int {
        guard !settings.cluster.isEmpty, gateway != nil else { return map.home(user: user) }
        return gateway.limits.node.cluster.place(user: user) ?? map.home(user: user)
    }

    /// Where a user's home is, only as far as the cluster names a node serving it (nil while none does).
    func servingPlace(user: UserID) -> Int? {
        guard !settings.cluster.isEmpty, gateway != nil else { return map.home(user: user) }
        return gateway.routes.place(user: user)
    }

    /// The gateway side of session `key`: the session itself on the home's
    /// own loop, else a port that sends commands to its loop.
    func port(for key: UInt64) -> (any SessionPort)? {
        links.place(ofSession: key) == index ? gateway.sessions[key] : links.port(for: key)
    }

    /// Where a guild's home is (in a cluster, also a channel's or conversation's, by id).
    func place(guild id: ServerID) -> Int {
        guard !settings.cluster.isEmpty, gateway != nil else { return map.home(guild: id) }
        return gateway.limits.node.cluster.place(guild: id) ?? map.home(guild: id)
    }

    /// An id for a new guild, placed on this home (a guild is made where it
    /// is asked for); in a cluster, also in a shard this node serves. Nil
    /// when this home serves no shard now.
    func newGuildID(now: UInt64) -> ServerID? {
        let served = gateway.limits.node.served
        for _ in 0..<100_000 {
            let id = ids.next(nowMillis: now)
            if map.home(guild: id) == index && served.serves(id: id) { return id }
        }
        return nil
    }

    /// An id for a new channel or conversation: in a cluster it hashes to
    /// the same shard as `shardOf` (the guild's id, or the lower user's
    /// shard), so any node can tell where a request naming it goes.
    func newID(now: UInt64, shard: Int?) -> UInt64 {
        guard let shard, !settings.cluster.isEmpty else { return ids.next(nowMillis: now) }
        while true {
            let id = ids.next(nowMillis: now)
            if ShardPlan.shard(guild: id, shards: settings.shards) == shard { return id }
        }
    }

    /// `user`'s unread state in `c` now, with the display cap and mention window in force.
    func unread(_ user: UserID, _ c: ChannelRecord, now: UInt64) -> UnreadState {
        positions.unread(user, channel: c, now: now, displayCap: UInt64(settings.unreadDisplayCap),
                         mentionWindowMs: UInt64(settings.mentionWindowSeconds) * 1000)
    }

    /// The one permission check, before any handler: the request table names
    /// the bits, handlers add the ones their content needs (a send's
    /// mentions). A guest is never a member: read-only where it may look.
    func requirePermission(_ needed: Permission, at scope: PermissionScope, for s: HomeSession) throws(Failure) {
        let server: ServerID? = switch scope {
        case .server(let id): id
        case .channel(let id): directory.serverID(ofChannel: id)
        }
        if let server { try Self.requireNotGuest(s, in: server) }
        try directory.require(needed, of: s.user, at: scope)
    }

    /// `requirePermission` in a channel whose record the caller read.
    func requirePermission(_ needed: Permission, in channel: ChannelRecord, for s: HomeSession) throws(Failure) {
        try Self.requireNotGuest(s, in: channel.serverID)
        try directory.require(needed, of: s.user, in: channel)
    }

    private static func requireNotGuest(_ s: HomeSession, in server: ServerID) throws(Failure) {
        if !s.guestOf.isEmpty, s.guestOf.contains(server) { throw Failure.forbidden("guests are read-only in server \(server)") }
    }

    /// A channel the session may read: its guest view, or as a member sees it.
    func readableChannel(_ id: ChannelID, for s: HomeSession) throws(Failure) -> ChannelRecord {
        if let c = directory.channel(id), s.guestOf.contains(c.serverID) { return try directory.guestChannel(id) }
        return try directory.seen(by: s.user).channel(id)
    }
}

/// Runs `body`, answering its Failure as an error.
func attempt(_ id: UInt64, _ s: HomeSession, _ body: () throws(Failure) -> Void) {
    do { try body() } catch { s.fail(id, error) }
}
