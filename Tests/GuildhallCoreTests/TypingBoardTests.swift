// Typing is throttled per user and channel, expires, and ends with a message.

import Testing
@testable import GuildhallCore

@Suite struct TypingBoardTests {
    @Test func atMostOneFanOutPerUserPerChannelPerThrottle() {
        var b = TypingBoard(throttleMs: 3_000, expiryMs: 10_000)
        let results = [b.typed("alice", in: 1, now: 0), b.typed("alice", in: 1, now: 2_999), b.typed("bob", in: 1, now: 1_000),
                       b.typed("alice", in: 2, now: 1_000), b.typed("alice", in: 1, now: 3_000)]
        #expect(results == [true, false, true, true, true])
    }

    @Test func typersExpireAndNeverIncludeTheAskingUser() {
        var b = TypingBoard(throttleMs: 3_000, expiryMs: 10_000)
        _ = b.typed("alice", in: 1, now: 0)
        _ = b.typed("bob", in: 1, now: 5_000)
        let all = b.typers(in: 1, now: 6_000, excluding: "carol").map(\.user)
        let notBob = b.typers(in: 1, now: 6_000, excluding: "bob").map(\.user)
        let later = b.typers(in: 1, now: 10_000, excluding: "carol").map(\.user)
        #expect(all == ["alice", "bob"] && notBob == ["alice"] && later == ["bob"])
    }

    @Test func sendingAMessageEndsTyping() {
        var b = TypingBoard()
        _ = b.typed("alice", in: 1, now: 0)
        let first = b.stopped("alice", in: 1)
        let typers = b.typers(in: 1, now: 1, excluding: "x")
        let again = b.stopped("alice", in: 1)
        #expect(first && typers.isEmpty && !again)
    }
}
