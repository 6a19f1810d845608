// The replay buffer of a session: numbered by event seq, trimmed by
// acknowledgements, bounded by a count, and honest about what it can replay.

import Testing
@testable import GuildhallCore

@Suite struct ReplayRingTests {
    @Test func eventsAfterASeqComeBackInOrder() {
        let ring = ReplayRing<String>(capacity: 100)
        for i in 1...30 { ring.append("e\(i)") }
        #expect(ring.firstSeq == 1 && ring.lastSeq == 30)
        #expect(ring.canReplay(after: 25))
        #expect(ring.events(after: 25) == ["e26", "e27", "e28", "e29", "e30"])
        #expect(ring.events(after: 30).isEmpty)
        #expect(ring.canReplay(after: 30), "nothing missed is a valid resume point")
        #expect(!ring.canReplay(after: 31), "a seq the session never sent")
    }

    @Test func acknowledgedEventsGoAndReportWhatLeft() {
        let ring = ReplayRing<Int>(capacity: 100)
        for i in 1...10 { ring.append(i) }
        var dropped: [Int] = []
        ring.acknowledge(upTo: 4) { dropped.append($0) }
        #expect(dropped == [1, 2, 3, 4])
        #expect(ring.firstSeq == 5 && ring.count == 6)
        #expect(ring.canReplay(after: 4))
        #expect(!ring.canReplay(after: 3), "acknowledged events are not kept")
        for i in 11...40 { ring.append(i) }
        #expect(ring.events(after: 38) == [39, 40])
        ring.acknowledge(upTo: 40)
        #expect(ring.count == 0 && ring.canReplay(after: 40))
        ring.append(41)
        #expect(ring.firstSeq == 41 && ring.events(after: 40) == [41])
    }

    @Test func pastTheCapacityTheOldestGoAndAResumeFromBeforeThemFails() {
        let ring = ReplayRing<Int>(capacity: 5)
        var evicted: [Int] = []
        for i in 1...8 { if let old = ring.append(i) { evicted.append(old) } }
        #expect(evicted == [1, 2, 3])
        #expect(ring.firstSeq == 4 && ring.lastSeq == 8)
        #expect(!ring.canReplay(after: 2))
        #expect(ring.canReplay(after: 3))
        #expect(ring.events(after: 3) == [4, 5, 6, 7, 8])
    }

    @Test func withNoCapacityOnlyTheLatestSeqCanResume() {
        let ring = ReplayRing<Int>(capacity: 0)
        for i in 1...3 { ring.append(i) }
        #expect(ring.lastSeq == 3)
        #expect(ring.canReplay(after: 3))
        #expect(!ring.canReplay(after: 2))
    }
}
