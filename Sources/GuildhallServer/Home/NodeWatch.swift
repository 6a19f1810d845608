// What a home remembers of the other nodes of its cluster, and what each
// look at the lease view (ClusterView) changes: which nodes joined (the
// homes swap who is online with them), and which sessions other nodes'
// gateways held are over (Reception.followNodes ends them). Pure: the
// caller brings the view and the time.
//
//   a node seen         the view                          its sessions here
//   ------------------  --------------------------------  ------------------------------
//   left                its heartbeat is gone             those of the lives the view knew
//   started again       its heartbeat names a new life    those of its earlier lives
//   left, still away    out of the view for `grace`       all of them
//
// Why a session's life and not only its node: in a rolling restart a node
// stops and starts again, and its new life may log a user in here before the
// round that saw its old life leave reaches this home. Ending every session of
// a node seen leaving would end that new one too, and the user would hear
// nothing more on a connection that stays open. So a session of a life newer
// than any the view knew stays, until the view shows that life; if the view
// never does (that life ended too before a round saw it), it ends once the
// node has been away for `grace`. A session that names no life (0) is judged
// by its key, which counts from its life's start (Place.session(_:before:)).

struct NodeWatch {
    struct Change {
        /// Nodes that joined or started again: the homes swap who is online with them.
        var joined: Set<Int> = []
        var left: Set<Int> = []
        var restarted: Set<Int> = []
        /// Left nodes away for `grace`, whose every session ends.
        var overdue: Set<Int> = []
        fileprivate var knownLives: [Int: UInt64] = [:]
        fileprivate var lives: [Int: UInt64] = [:]

        /// Whether any session may be over.
        var endsAny: Bool { !left.isEmpty || !restarted.isEmpty || !overdue.isEmpty }

        /// Whether the session with `key`, of its gateway's life `life`, is over.
        func ends(key: UInt64, life: UInt64) -> Bool {
            let node = Place.node(ofSession: key)
            if overdue.contains(node) { return true }
            if left.contains(node) { return life == 0 || knownLives[node].map { life <= $0 } ?? true }
            guard restarted.contains(node), let current = lives[node] else { return false }
            return life == 0 ? Place.session(key, before: current) : life < current
        }
    }

    private var live: Set<Int> = []
    private var lives: [Int: UInt64] = [:]
    /// Nodes that left, since when (ms): sessions of a newer life wait this long for it to show.
    private var away: [Int: UInt64] = [:]

    /// One look at the view: `live` nodes, each node's `lives`, at `now` (ms).
    mutating func look(live: Set<Int>, lives: [Int: UInt64], me: Int, now: UInt64, grace: UInt64) -> Change {
        var c = Change(knownLives: self.lives, lives: lives)
        c.restarted = Set(lives.compactMap { node, life in self.lives[node].map { $0 != life && live.contains(node) ? node : nil } ?? nil })
        c.left = self.live.subtracting(live)
        c.joined = live.subtracting(self.live).union(c.restarted).subtracting([me])
        for node in c.left { away[node] = now }
        for node in live { away.removeValue(forKey: node) }
        c.overdue = Set(away.compactMap { node, since in now >= since + grace ? node : nil })
        for node in c.overdue { away.removeValue(forKey: node) }
        self.live = live
        self.lives = lives
        return c
    }
}
