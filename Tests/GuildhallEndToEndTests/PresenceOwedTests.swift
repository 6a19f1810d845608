// PresenceOwed (PresenceFrames.swift) without sockets: the latest state per
// user, in the order users first changed, one frame per interval carrying them all.

import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct PresenceOwedTests {
    func p(_ user: String, _ status: GHPresenceStatus) -> GHPresence {
        var p = GHPresence()
        p.userID = user
        p.status = status
        return p
    }

    @Test func manyChangesBecomeOneFramePerIntervalWithTheLatestOfEachUser() {
        var owed = PresenceOwed()
        owed.offer([p("alice", .presenceOnline), p("bob", .presenceOnline)])
        owed.offer([p("alice", .presenceIdle), p("carol", .presenceDoNotDisturb)])
        let first = owed.take(now: 1_000, intervalMs: 1_000)
        #expect(first?.presences.map(\.userID) == ["alice", "bob", "carol"])
        #expect(first?.presences.first?.status == .presenceIdle)
        #expect(owed.isEmpty && owed.take(now: 1_001, intervalMs: 1_000) == nil)
        owed.offer([p("bob", .presenceOffline)])
        owed.offer([p("bob", .presenceOnline)])
        #expect(owed.take(now: 1_999, intervalMs: 1_000) == nil, "within the interval nothing goes out")
        #expect(!owed.isEmpty, "what waits is kept, not shed")
        #expect(owed.take(now: 2_000, intervalMs: 1_000)?.presences == [p("bob", .presenceOnline)])
    }
}
