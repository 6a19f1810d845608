// Where a home or a gateway is, as one Int (docs/cluster.md): a loop
// of this node is its loop index (0..<256); a loop of another node is
// (node + 1) << 8 | loop. A session's key names its node and loop
// (`counter << 18 | node << 8 | loop`), so any home knows where to reach it.
// Pure.

enum Place {
    static func remote(node: Int, loop: Int) -> Int { (node + 1) << 8 | loop }

    /// The node of a place on another node; nil for this node's loops.
    static func node(of place: Int) -> Int? { place >= 256 ? (place >> 8) - 1 : nil }

    static func loop(of place: Int) -> Int { place & 0xff }

    static func isRemote(_ place: Int) -> Bool { place >= 256 }

    /// The counter of the next session key after `last`, at wall-clock time
    /// `nowMs` (Unix ms): never below 64 per millisecond since 2026. A node
    /// that restarts must not hand out the keys of its earlier life: other
    /// nodes' homes may still hold sessions under them (a session whose end
    /// they were never told of), and would act on a new session, of anyone,
    /// as on the old one. Counting from the clock keeps keys apart across
    /// restarts, even of a node whose data folder is new, unless one loop
    /// took more than 64 connections a millisecond for longer than the
    /// restart took. 46 bits of counter last until 2060.
    static func nextSessionCounter(after last: UInt64, nowMs: UInt64) -> UInt64 {
        let epoch2026: UInt64 = 1_767_225_600_000
        return max(last + 1, (nowMs > epoch2026 ? nowMs - epoch2026 : 0) << 6)
    }

    /// Whether session `key` is older than a node's life that started at `startedAtMs` (wall clock):
    /// every key a life hands out counts from its own start (`nextSessionCounter`).
    static func session(_ key: UInt64, before startedAtMs: UInt64) -> Bool { key >> 18 < nextSessionCounter(after: 0, nowMs: startedAtMs) }

    /// A session key for gateway `loop` of node `node`.
    static func sessionKey(_ counter: UInt64, node: Int, loop: Int) -> UInt64 { counter << 18 | UInt64(node) << 8 | UInt64(loop) }

    /// The node of a session key.
    static func node(ofSession key: UInt64) -> Int { Int((key >> 8) & 0x3ff) }

    /// Where session `key`'s gateway is, seen from node `me`.
    static func of(session key: UInt64, me: Int) -> Int {
        let node = node(ofSession: key), loop = Int(key & 0xff)
        return node == me ? loop : remote(node: node, loop: loop)
    }
}

/// A session id as clients see it, "node-key-random": the node that made it
/// and the session's key (which names its gateway), so a resume on any loop
/// of any node finds where the session is.
enum SessionID {
    /// The id of the session with `key`. It names the node of the session's
    /// gateway (the key's), where a dropped session waits for its resume: not
    /// the node of the user's home, which made the id and may be another.
    static func make(key: UInt64) -> String { "\(Place.node(ofSession: key))-\(key)-\(UInt32.random(in: 0...UInt32.max))" }

    /// The session key an id names.
    static func key(of id: String) -> UInt64? {
        let parts = id.split(separator: "-")
        guard parts.count == 3 else { return nil }
        return UInt64(parts[1])
    }

    /// The node that made the session an id names.
    static func node(of id: String) -> Int? { id.split(separator: "-").first.flatMap { Int($0) } }

    /// The gateway (loop) that holds the session an id names: the key's low byte.
    static func gateway(of id: String) -> Int? { key(of: id).map { Int($0 & 0xff) } }
}
