// The replay buffer of a session: numbered by event seq, trimmed by
// acknowledgements, bounded by a count, and honest about what it can replay.
// (Values are read into locals first: the ring is noncopyable, and
// #expect's expansion would copy it.)

import Testing
@testable import GuildhallCore

@Suite struct ReplayRingTests {
    @Test func eventsAfterASeqComeBackInOrder() {
        var ring = ReplayRing<String>(capacity: 100)
        for i in 1...30 { ring.append("e\(i)") }
        let (first, last) = (ring.firstSeq, ring.lastSeq)
        #expect(first == 1 && last == 30)
        let (from25, after25, after30) = (ring.canReplay(after: 25), ring.events(after: 25), ring.events(after: 30))
        #expect(from25)
        #expect(after25 == ["e26", "e27", "e28", "e29", "e30"])
        #expect(after30.isEmpty)
        let (from30, from31) = (ring.canReplay(after: 30), ring.canReplay(after: 31))
        #expect(from30, "nothing missed is a valid resume point")
        #expect(!from31, "a seq the session never sent")
    }

    @Test func acknowledgedEventsGoAndReportWhatLeft() {
        var ring = ReplayRing<Int>(capacity: 100)
        for i in 1...10 { ring.append(i) }
        var dropped: [Int] = []
        ring.acknowledge(upTo: 4) { dropped.append($0) }
        #expect(dropped == [1, 2, 3, 4])
        let (first, count) = (ring.firstSeq, ring.count)
        #expect(first == 5 && count == 6)
        let (from4, from3) = (ring.canReplay(after: 4), ring.canReplay(after: 3))
        #expect(from4)
        #expect(!from3, "acknowledged events are not kept")
        for i in 11...40 { ring.append(i) }
        let after38 = ring.events(after: 38)
        #expect(after38 == [39, 40])
        ring.acknowledge(upTo: 40)
        let (emptied, from40) = (ring.count == 0, ring.canReplay(after: 40))
        #expect(emptied && from40)
        ring.append(41)
        let (first41, after40) = (ring.firstSeq, ring.events(after: 40))
        #expect(first41 == 41 && after40 == [41])
    }

    @Test func pastTheCapacityTheOldestGoAndAResumeFromBeforeThemFails() {
        var ring = ReplayRing<Int>(capacity: 5)
        var evicted: [Int] = []
        for i in 1...8 { if let old = ring.append(i) { evicted.append(old) } }
        #expect(evicted == [1, 2, 3])
        let (first, last) = (ring.firstSeq, ring.lastSeq)
        #expect(first == 4 && last == 8)
        let (from2, from3, after3) = (ring.canReplay(after: 2), ring.canReplay(after: 3), ring.events(after: 3))
        #expect(!from2)
        #expect(from3)
        #expect(after3 == [4, 5, 6, 7, 8])
    }

    @Test func withNoCapacityOnlyTheLatestSeqCanResume() {
        var ring = ReplayRing<Int>(capacity: 0)
        for i in 1...3 { ring.append(i) }
        let (last, from3, from2) = (ring.lastSeq, ring.canReplay(after: 3), ring.canReplay(after: 2))
        #expect(last == 3)
        #expect(from3)
        #expect(!from2)
    }

    @Test func aBurstsStorageIsGivenBackOnceAcknowledgementsShowItIsNotNeeded() {
        var ring = ReplayRing<Int>(capacity: 10_000)
        var seq = 0
        // A steady client: 300 events, then it acknowledges all but the last 10.
        for _ in 0..<(2 * ReplayRing<Int>.reviewEvery) {
            for _ in 0..<300 { seq += 1; ring.append(seq) }
            ring.acknowledge(upTo: UInt64(seq - 10))
        }
        let steady = ring.storage
        #expect(steady == 512, "310 held at each acknowledgement fit in 512")
        // A burst: 2000 events before the next acknowledgement.
        for _ in 0..<2000 { seq += 1; ring.append(seq) }
        let burst = ring.storage
        #expect(burst == 2048)
        ring.acknowledge(upTo: UInt64(seq - 10))
        // Back to the steady pace: within two reviews (the first still saw the burst) the storage is what the pace needs again.
        for _ in 0..<(2 * ReplayRing<Int>.reviewEvery) {
            for _ in 0..<300 { seq += 1; ring.append(seq) }
            ring.acknowledge(upTo: UInt64(seq - 10))
        }
        let after = ring.storage
        #expect(after == 512)
        // What is held came through every move intact.
        let (count, held) = (ring.count, ring.events(after: UInt64(seq - 10)))
        #expect(count == 10 && held == Array((seq - 9)...seq))
        // A client that catches up entirely keeps the least.
        for _ in 0..<(2 * ReplayRing<Int>.reviewEvery) { seq += 1; ring.append(seq); ring.acknowledge(upTo: UInt64(seq)) }
        let idle = ring.storage
        #expect(idle == ReplayRing<Int>.leastStorage)
    }

    @Test func anIdleSessionsOneEventTakesTheLeastStorage() {
        var ring = ReplayRing<Int>(capacity: 10_000)
        #expect(ring.storage == 0)
        ring.append(1)
        #expect(ring.storage == ReplayRing<Int>.leastStorage && ReplayRing<Int>.leastStorage <= 4)
        for i in 2...5 { ring.append(i) }
        let (grown, held) = (ring.storage, ring.events(after: 0))
        #expect(grown == 2 * ReplayRing<Int>.leastStorage && held == [1, 2, 3, 4, 5])
    }

    @Test func aClientWhoseHoldingWaversAcrossAPowerOfTwoKeepsItsStorage() {
        var ring = ReplayRing<Int>(capacity: 10_000)
        var seq = 0
        // 600 held at one acknowledgement (storage 1024), then whole reviews of 500 (which 512 would fit).
        for _ in 0..<600 { seq += 1; ring.append(seq) }
        ring.acknowledge(upTo: UInt64(seq - 100))
        var sizes: [Int] = []
        for _ in 0..<(3 * ReplayRing<Int>.reviewEvery) {
            for _ in 0..<400 { seq += 1; ring.append(seq) }
            ring.acknowledge(upTo: UInt64(seq - 100))
            sizes.append(ring.storage)
        }
        #expect(Set(sizes) == [1024], "not cut to 512 only to grow again at the next 600")
        // Held at a tenth of the storage: cut.
        for _ in 0..<(2 * ReplayRing<Int>.reviewEvery) { seq += 1; ring.append(seq); ring.acknowledge(upTo: UInt64(seq - 90)) }
        let cut = ring.storage
        #expect(cut == 128)
    }

    @Test func aFewLeftAfterAnAcknowledgementMoveToTheFrontInOrder() {
        var ring = ReplayRing<String>(capacity: 10_000)
        var seq = 0
        // Rounds that leave 0 to 20 held, so the front is reached from every place, wrapped or not.
        for round in 0..<200 {
            for _ in 0..<(37 + round % 11) { seq += 1; ring.append("e\(seq)") }
            let left = round % 21
            ring.acknowledge(upTo: UInt64(seq - left))
            let (events, count, first) = (ring.events(after: UInt64(seq - left)), ring.count, ring.firstSeq)
            #expect(events == (0..<left).map { "e\(seq - left + 1 + $0)" })
            #expect(count == left && first == UInt64(seq - left + 1))
        }
        for _ in 0..<5 { seq += 1; ring.append("e\(seq)") }
        ring.acknowledge(upTo: UInt64(seq - 3))
        let (head, events) = (ring.head, ring.events(after: UInt64(seq - 3)))
        #expect(head == 0, "three left, not wrapped: the next appends reuse the front")
        #expect(events == ["e\(seq - 2)", "e\(seq - 1)", "e\(seq)"])
    }
}
