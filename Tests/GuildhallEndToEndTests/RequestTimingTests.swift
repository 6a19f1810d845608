// The request timing behind guildhall_request_duration_seconds: a session's
// unanswered requests matched to their answers in any order, and the loop's
// figures by kind. Socket-free: the types are driven directly.

import Testing
@testable import GuildhallServer

struct RequestTimingTests {
    @Test func answersAreMatchedToTheirRequestsInAnyOrder() {
        var waiting = UnansweredRequests()
        #expect(waiting.isEmpty)
        waiting.read(1, "send_message", at: UnansweredRequests.now())
        waiting.read(2, "get_messages", at: UnansweredRequests.now())
        waiting.read(3, "send_message", at: UnansweredRequests.now())
        #expect(!waiting.isEmpty)
        #expect(waiting.answered(2)?.kind == "get_messages")
        #expect(waiting.answered(2) == nil, "an answer is timed once")
        #expect(waiting.answered(9) == nil, "an id never read is not timed")
        #expect(waiting.answered(1)?.kind == "send_message")
        #expect(waiting.answered(3)?.kind == "send_message")
        #expect(waiting.isEmpty)
        #expect(waiting.answered(3) == nil)
    }

    @Test func aQuietSessionsListGivesItsRoomBackAndStillTimes() {
        var waiting = UnansweredRequests()
        waiting.read(1, "a", at: UnansweredRequests.now())
        waiting.giveBackRoom()
        #expect(waiting.answered(1)?.kind == "a", "a waiting request is kept")
        waiting.giveBackRoom()
        #expect(waiting.isEmpty)
        waiting.read(2, "b", at: UnansweredRequests.now())
        waiting.read(3, "c", at: UnansweredRequests.now())
        #expect(waiting.answered(3)?.kind == "c" && waiting.answered(2)?.kind == "b")
    }

    @Test func idsAClientDidNotNumberInOrderAreMatchedToo() {
        var waiting = UnansweredRequests()
        for (id, kind) in [(5, "a"), (3, "b"), (9, "c"), (3, "d"), (7, "e")] { waiting.read(UInt64(id), kind, at: UnansweredRequests.now()) }
        #expect(waiting.answered(9)?.kind == "c")
        #expect(waiting.answered(3)?.kind == "b", "a repeated id answers the one read first")
        #expect(waiting.answered(7)?.kind == "e")
        #expect(waiting.answered(4) == nil)
        #expect(waiting.answered(3)?.kind == "d")
        #expect(waiting.answered(5)?.kind == "a")
        #expect(waiting.isEmpty)
        // Emptied, rising ids are found by search again, answered in any order.
        for id in 10...20 { waiting.read(UInt64(id), "k\(id)", at: UnansweredRequests.now()) }
        for id in [15, 10, 20, 11, 19, 12, 18, 13, 17, 14, 16] { #expect(waiting.answered(UInt64(id))?.kind == "k\(id)") }
        #expect(waiting.isEmpty)
    }

    @Test func pastTheCapMoreRequestsGoUntimedUntilAnswersMakeRoom() {
        var waiting = UnansweredRequests()
        for id in 1...UInt64(UnansweredRequests.cap + 10) { waiting.read(id, "send_message", at: UnansweredRequests.now()) }
        #expect(waiting.answered(UInt64(UnansweredRequests.cap) + 1) == nil, "read past the cap: untimed")
        // Answered from the front, far past the point where the front is compacted.
        for id in 1...UInt64(UnansweredRequests.cap) { #expect(waiting.answered(id) != nil) }
        #expect(waiting.isEmpty)
        waiting.read(5000, "login", at: UnansweredRequests.now())
        #expect(waiting.answered(5000)?.kind == "login")
    }

    @Test func figuresAreKeptByKind() {
        var durations = RequestDurations()
        durations.record("send_message", seconds: 0.0001)
        durations.record("send_message", seconds: 0.003)
        durations.record("login", seconds: 2)
        durations.record("send_message", seconds: 10)
        let figures = durations.byKind
        #expect(figures.count == 2)
        #expect(figures["send_message"]?.count == 3 && figures["login"]?.count == 1)
        let buckets = figures["send_message"]?.buckets ?? []
        #expect(buckets.first == 1 && buckets.last == 1, "\(buckets)")
        #expect(buckets[RequestDurations.bounds.firstIndex(of: 0.005)!] == 1)
        #expect(figures["login"]?.buckets[RequestDurations.bounds.firstIndex(of: 5)!] == 1)
    }
}
