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
}
