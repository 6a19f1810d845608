// UIDs are unique, time-ordered, carry their node, and never repeat after a restart.

import Testing
@testable import GuildhallCore

@Suite struct UIDGeneratorTests {
    @Test func uidsAreStrictlyIncreasingWithinOneMillisecond() {
        var g = UIDGenerator(node: 3)
        let now: UInt64 = 1_800_000_000_000
        var last: UInt64 = 0
        for _ in 0..<10_000 {
            let uid = g.next(nowMillis: now)
            #expect(uid > last)
            last = uid
        }
    }

    @Test func uidsCarryTheirNodeAndTime() {
        var g = UIDGenerator(node: 1023)
        let uid = g.next(nowMillis: 1_800_000_000_123)
        #expect((uid >> 12) & 0x3FF == 1023)
        #expect(UIDGenerator.millis(of: uid) == 1_800_000_000_123)
    }

    @Test func aClockGoingBackwardsNeverReissuesAnID() {
        var g = UIDGenerator(node: 0)
        let a = g.next(nowMillis: 1_800_000_000_000)
        let b = g.next(nowMillis: 1_700_000_000_000)
        #expect(b > a)
    }

    @Test func resumingAfterARestartContinuesPastTheHighestID() {
        var first = UIDGenerator(node: 0)
        let now: UInt64 = 1_800_000_000_000
        let issued = (0..<5).map { _ in first.next(nowMillis: now) }
        var restarted = UIDGenerator(node: 0)
        restarted.resume(after: issued.last!)
        #expect(restarted.next(nowMillis: now) > issued.last!)
    }

    @Test func floorIsAtOrBelowEveryUIDOfThatMillisecond() {
        var g = UIDGenerator(node: 5)
        let now: UInt64 = 1_800_000_000_000
        #expect(UIDGenerator.floor(atMillis: now) <= g.next(nowMillis: now))
        #expect(UIDGenerator.floor(atMillis: now + 1) > g.next(nowMillis: now))
    }

    @Test func lanesNeverIssueTheSameIDAndEachStaysIncreasing() {
        let now: UInt64 = 1_800_000_000_000
        for lanes in [2, 3, 8, 64] {
            var seen = Set<UInt64>()
            for lane in 0..<lanes {
                var g = UIDGenerator(node: 7, lane: lane, lanes: lanes)
                var last: UInt64 = 0
                for _ in 0..<5000 {  // past one millisecond's share of the counter
                    let uid = g.next(nowMillis: now)
                    #expect(uid > last)
                    #expect(seen.insert(uid).inserted, "lanes \(lanes): \(uid) issued twice")
                    #expect((uid >> 12) & 0x3FF == 7)
                    last = uid
                }
            }
        }
    }

    @Test func aLaneResumesPastIDsThatOtherLayoutsIssued() {
        let now: UInt64 = 1_800_000_000_000
        var single = UIDGenerator(node: 0)
        let issued = (0..<3000).map { _ in single.next(nowMillis: now) }
        for lanes in [2, 5, 64] {
            for lane in 0..<lanes {
                var g = UIDGenerator(node: 0, lane: lane, lanes: lanes)
                g.resume(after: issued.last!)
                #expect(g.next(nowMillis: now) > issued.last!)
            }
        }
    }
}
