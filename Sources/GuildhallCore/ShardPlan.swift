// Which shards a node should hold (docs/cluster.md): with N live nodes, each
// holds about S/N; a node below its share claims free shards (starting at a
// place its id picks, so nodes do not all race for the same ones), a node
// above it releases a few per round, so shards move a few at a time when a
// node joins or leaves. Pure: the lease loop (ShardLeases) applies the plan.

public enum ShardPlan {
    /// `shard = hash(id) mod shards`, with the same FNV-1a the loops use for users.
    public static func shard(of id: String, shards: Int) -> Int { Int(HomeMap.fnv1a(id) % UInt64(shards)) }

    /// A user's shard: where its own state (sessions' admission, inbox, cursors, received status) is kept.
    public static func shard(user: UserID, shards: Int) -> Int { shard(of: user, shards: shards) }

    /// A guild's shard, with the mix the loops use for guild ids.
    public static func shard(guild id: ServerID, shards: Int) -> Int { Int(HomeMap.mix(id) % UInt64(shards)) }

    /// A direct conversation's shard: its lower user's.
    public static func shard(conversationOf a: UserID, _ b: UserID, shards: Int) -> Int { shard(user: min(a, b), shards: shards) }

    /// A held conversation's shard: a pair's lower user's, a group's its id's as a guild's.
    public static func shard(of c: DirectConversation, shards: Int) -> Int {
        c.isGroup ? shard(guild: c.id, shards: shards) : shard(conversationOf: c.users.0, c.users.1, shards: shards)
    }

    /// The most shards one of `nodes` live nodes should hold.
    public static func share(shards: Int, nodes: Int) -> Int { (shards + max(nodes, 1) - 1) / max(nodes, 1) }

    /// Free shards to try to claim, in the order to try them, to reach the share.
    public static func toClaim(held: Set<Int>, taken: Set<Int>, shards: Int, nodes: Int, node: Int) -> [Int] {
        let want = share(shards: shards, nodes: nodes) - held.count
        guard want > 0 else { return [] }
        let start = (node &* 2_654_435_761) % max(shards, 1)
        var out: [Int] = []
        for i in 0..<shards where out.count < want {
            let s = (start + i) % shards
            if !held.contains(s) && !taken.contains(s) { out.append(s) }
        }
        return out
    }

    /// Held shards to give up this round (at most `step`), when above the share.
    public static func toRelease(held: Set<Int>, shards: Int, nodes: Int, step: Int = 2) -> [Int] {
        let extra = held.count - share(shards: shards, nodes: nodes)
        guard extra > 0 else { return [] }
        return Array(held.sorted().suffix(min(extra, step)))
    }
}
