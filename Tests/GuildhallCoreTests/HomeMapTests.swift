// Homes from ids: one loop homes everything; with more, ids spread evenly,
// the same way every time, and a conversation's home is its lower user's.

import Testing
@testable import GuildhallCore

@Suite struct HomeMapTests {
    /// The shard function as docs/cluster.md's "Ownership" documents it, for an
    /// operator's own tools: FNV-1a 64 of a user id's UTF-8 bytes, and the
    /// SplitMix64 finalizer of a guild id, each mod the number of shards.
    @Test func theShardFunctionIsTheDocumentedOne() {
        #expect(ShardPlan.shard(user: "alice", shards: 64) == 7)
        #expect(ShardPlan.shard(user: "alice", shards: 1024) == 263)
        #expect(ShardPlan.shard(guild: 383_568_189_012_836_352, shards: 64) == 14)
        #expect(ShardPlan.shard(guild: 383_568_189_012_836_352, shards: 1024) == 206)
    }

    @Test func oneLoopHomesEverything() {
        let map = HomeMap(loops: 1)
        #expect(map.home(guild: 12345) == 0)
        #expect(map.home(user: "alice") == 0)
    }

    @Test func consecutiveUIDsSpreadEvenlyOverTheLoops() {
        var g = UIDGenerator(node: 0, lane: 1, lanes: 4)
        for loops in [2, 3, 4, 8] {
            let map = HomeMap(loops: loops)
            var counts = Array(repeating: 0, count: loops)
            for _ in 0..<8000 { counts[map.home(guild: g.next(nowMillis: 1_800_000_000_000))] += 1 }
            let fair = 8000 / loops
            #expect(counts.allSatisfy { abs($0 - fair) < fair / 5 }, "\(loops) loops: \(counts)")
        }
    }

    @Test func usersSpreadAndKeepTheirHome() {
        let map = HomeMap(loops: 2)
        var counts = [0, 0]
        for i in 0..<2000 { counts[map.home(user: "user-\(i)")] += 1 }
        #expect(counts.allSatisfy { abs($0 - 1000) < 200 }, "\(counts)")
        // Fixed, not seeded per process: a known user always lands where it did.
        #expect(HomeMap.fnv1a("alice") == 0x508b_2abb_65a0_3907)
    }

    @Test func aConversationLivesAtItsLowerUsersHome() {
        let map = HomeMap(loops: 7)
        for (a, b) in [("alice", "bob"), ("zed", "amy"), ("u1", "u10")] {
            #expect(map.home(conversationOf: a, b) == map.home(user: min(a, b)))
            #expect(map.home(conversationOf: a, b) == map.home(conversationOf: b, a))
        }
    }
}
