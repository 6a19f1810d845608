// Which home owns what (docs/architecture.md, docs/cluster.md): the one function from a
// guild's or a user's id to the loop that is its home. A direct
// conversation lives at its lower user's home, so both users' requests find
// it from the pair; a group conversation at its id's, as a guild does. The hash is fixed (not Swift's per-process seeded one):
// every loop, and every run, must place an id the same way; a new `loops`
// count moves homes at the next start, which loads each home's share from
// the store. Pure.

public struct HomeMap: Sendable, Equatable {
    public let loops: Int
    /// In a cluster, the deployment's shards: a home is then its shard's loop
    /// (shard mod loops), so any node can tell the loop of any id on another
    /// node from that node's loop count; channel and conversation ids share
    /// their guild's or lower user's shard (ShardPlan).
    public let shards: Int?

    public init(loops: Int, shards: Int? = nil) {
        precondition(loops >= 1)
        self.loops = loops
        self.shards = shards
    }

    /// The home of a guild (server) and everything in it (in a cluster, also of a channel or conversation id).
    @inline(__always)
    public func home(guild id: ServerID) -> Int {
        if let shards { return Int(Self.mix(id) % UInt64(shards)) % loops }
        return loops == 1 ? 0 : Int(Self.mix(id) % UInt64(loops))
    }

    /// The home of a user's own state: sessions' admission, inbox, sync cursors, received status.
    public func home(user: UserID) -> Int {
        if let shards { return Int(Self.fnv1a(user) % UInt64(shards)) % loops }
        return loops == 1 ? 0 : Int(Self.mix(Self.fnv1a(user)) % UInt64(loops))
    }

    /// The home of the direct conversation between two users: the lower one's.
    public func home(conversationOf a: UserID, _ b: UserID) -> Int { home(user: min(a, b)) }

    /// The home of a direct conversation: a pair's lower user's; a group's, its id's as a guild's (it was made there).
    public func home(of c: DirectConversation) -> Int { c.isGroup ? home(guild: c.id) : home(conversationOf: c.users.0, c.users.1) }

    /// Spreads ids that differ only in their low or high bits (UIDs) over all homes.
    @inline(__always)
    static func mix(_ x: UInt64) -> UInt64 {
        var z = x &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    static func fnv1a(_ s: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in s.utf8 {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01b3
        }
        return h
    }
}
