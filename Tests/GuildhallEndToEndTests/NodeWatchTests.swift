// NodeWatch: which nodes joined and which sessions of other nodes' gateways
// are over, look by look at the lease view (NodeWatch.swift), without NATS.

import Testing
@testable import GuildhallServer

@Suite struct NodeWatchTests {
    static let (oldLife, newLife): (UInt64, UInt64) = (1_790_000_000_000, 1_790_000_060_000)
    static let grace: UInt64 = 10_000

    /// A session of node `node`'s gateway made at `ms` (wall clock), as its gateway would key it.
    static func key(node: Int, at ms: UInt64) -> UInt64 { Place.sessionKey(Place.nextSessionCounter(after: 0, nowMs: ms), node: node, loop: 0) }

    /// The watch after it saw nodes 1 (me), 2 and 3, node 2 in its old life.
    static func watching() -> NodeWatch {
        var w = NodeWatch()
        let first = w.look(live: [1, 2, 3], lives: [1: 5, 2: oldLife, 3: 7], me: 1, now: 0, grace: grace)
        #expect(first.joined == [2, 3] && !first.endsAny)
        return w
    }

    @Test func aNodeThatLeftEndsTheSessionsOfItsKnownLife() {
        var w = Self.watching()
        let c = w.look(live: [1, 3], lives: [1: 5, 3: 7], me: 1, now: 100, grace: Self.grace)
        #expect(c.left == [2] && c.joined.isEmpty)
        #expect(c.ends(key: Self.key(node: 2, at: Self.oldLife + 5), life: Self.oldLife))
        #expect(c.ends(key: Self.key(node: 2, at: Self.oldLife + 5), life: 0), "a session naming no life ends with its node")
        #expect(!c.ends(key: Self.key(node: 3, at: Self.oldLife + 5), life: 7), "another node's stays")
    }

    /// The rolling restart: node 2 came back and logged a session in here
    /// before the round that saw it leave reached this home.
    @Test func aSessionOfALifeTheViewHasNotSeenYetStays() {
        var w = Self.watching()
        let newSession = Self.key(node: 2, at: Self.newLife + 5)
        let left = w.look(live: [1, 3], lives: [1: 5, 3: 7], me: 1, now: 100, grace: Self.grace)
        #expect(left.left == [2])
        #expect(!left.ends(key: newSession, life: Self.newLife))
        let back = w.look(live: [1, 2, 3], lives: [1: 5, 2: Self.newLife, 3: 7], me: 1, now: 300, grace: Self.grace)
        #expect(back.joined == [2] && !back.endsAny, "once back, nothing more of it ends")
        let later = w.look(live: [1, 2, 3], lives: [1: 5, 2: Self.newLife, 3: 7], me: 1, now: 300 + Self.grace, grace: Self.grace)
        #expect(!later.endsAny, "a node that came back is not overdue")
    }

    @Test func aNewLifeTheViewNeverShowsEndsOnceItsNodeWasAwayForTheGrace() {
        var w = Self.watching()
        let newSession = Self.key(node: 2, at: Self.newLife + 5)
        _ = w.look(live: [1, 3], lives: [1: 5, 3: 7], me: 1, now: 100, grace: Self.grace)
        let soon = w.look(live: [1, 3], lives: [1: 5, 3: 7], me: 1, now: 100 + Self.grace - 1, grace: Self.grace)
        #expect(!soon.endsAny)
        let overdue = w.look(live: [1, 3], lives: [1: 5, 3: 7], me: 1, now: 100 + Self.grace, grace: Self.grace)
        #expect(overdue.overdue == [2] && overdue.ends(key: newSession, life: Self.newLife))
        let after = w.look(live: [1, 3], lives: [1: 5, 3: 7], me: 1, now: 200 + Self.grace, grace: Self.grace)
        #expect(!after.endsAny, "once")
    }

    /// A node that started again between two rounds (its heartbeat names a new life).
    @Test func aNodeThatStartedAgainEndsItsEarlierLivesSessionsOnly() {
        var w = Self.watching()
        let c = w.look(live: [1, 2, 3], lives: [1: 5, 2: Self.newLife, 3: 7], me: 1, now: 100, grace: Self.grace)
        #expect(c.restarted == [2] && c.joined == [2] && c.left.isEmpty)
        #expect(c.ends(key: Self.key(node: 2, at: Self.oldLife + 5), life: Self.oldLife))
        #expect(!c.ends(key: Self.key(node: 2, at: Self.newLife + 5), life: Self.newLife))
        #expect(c.ends(key: Self.key(node: 2, at: Self.oldLife + 5), life: 0), "one naming no life is judged by its key")
        #expect(!c.ends(key: Self.key(node: 2, at: Self.newLife + 5), life: 0))
    }
}
