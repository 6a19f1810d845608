// TypingOwed (TypingFrames.swift) without sockets: the latest list per
// channel, one frame per interval carrying them all, shedding.

import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct TypingOwedTests {
    func entry(_ channel: UInt64, _ users: [String]) -> GHChannelTypers {
        var e = GHChannelTypers()
        e.serverID = 1
        e.channelID = channel
        e.typers = users.map { u in
            var t = GHTyper()
            t.userID = u
            return t
        }
        return e
    }

    @Test func oneFramePerIntervalCarriesTheLatestListOfEveryChannel() throws {
        var owed = TypingOwed()
        #expect(owed.take(now: 0, intervalMs: 1000) == nil, "nothing owed, nothing sent")
        owed.offer(entry(10, ["a"]))
        let taken = owed.take(now: 5_000, intervalMs: 1000)
        let first = try #require(taken)
        #expect(first.channels.map(\.channelID) == [10] && first.channelID == 10 && first.typers.map(\.userID) == ["a"])
        owed.offer(entry(20, ["b"]))
        owed.offer(entry(10, ["a", "c"]))
        owed.offer(entry(20, ["b", "d"]))
        #expect(owed.take(now: 5_999, intervalMs: 1000) == nil, "within the interval of the last frame")
        let again = owed.take(now: 6_000, intervalMs: 1000)
        let second = try #require(again)
        #expect(second.channels.map(\.channelID) == [20, 10], "in the order channels first changed")
        #expect(second.channels.map { $0.typers.map(\.userID) } == [["b", "d"], ["a", "c"]], "each channel's latest list")
        #expect(second.channelID == 20 && second.typers == second.channels[0].typers)
        #expect(owed.isEmpty)
    }

    @Test func sheddingDropsWhatIsOwedWithoutMovingTheInterval() {
        var owed = TypingOwed()
        owed.offer(entry(10, ["a"]))
        owed.offer(entry(20, ["b"]))
        #expect(owed.shed() == 2 && owed.isEmpty)
        owed.offer(entry(10, ["a"]))
        #expect(owed.take(now: 0, intervalMs: 1000) != nil, "no frame went out: the next may go at once")
    }
}
