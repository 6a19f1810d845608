// Group read receipts as per-member cursors: counts, reader pages newest
// first, no-op repeats, and storage that grows with advances only.

import Testing
@testable import GuildhallCore

@Suite struct ChannelReceiptsTests {
    @Test func aResponseCoversEveryEarlierMessageAndCountsOnce() {
        var r = ChannelReceipts()
        r.respond("ann", upTo: 5, at: 100)
        r.respond("bob", upTo: 3, at: 110)
        #expect(r.readerCount(of: 1) == 2)
        #expect(r.readerCount(of: 3) == 2)
        #expect(r.readerCount(of: 4) == 1)
        #expect(r.readerCount(of: 6) == 0)
        #expect(r.hasRead("bob", 3) && !r.hasRead("bob", 4))
        r.respond("bob", upTo: 9, at: 120)
        #expect(r.readerCount(of: 4) == 2)
        #expect(r.readerCount(of: 9) == 1)
        #expect(r.respondents == 2)
    }

    @Test func respondingAgainOrBehindTheCursorIsANoOp() {
        var r = ChannelReceipts()
        #expect(r.respond("ann", upTo: 5, at: 100) != nil)
        #expect(r.respond("ann", upTo: 5, at: 200) == nil)
        #expect(r.respond("ann", upTo: 2, at: 300) == nil)
        #expect(r.advances.count == 1)
        #expect(r.readers(of: 2, limit: 10).0 == [.init(user: "ann", time: 100)])
    }

    @Test func readersComeNewestFirstWithTheTimeTheyFirstCoveredTheMessage() {
        var r = ChannelReceipts()
        r.respond("ann", upTo: 10, at: 100)
        r.respond("bob", upTo: 4, at: 110)
        r.respond("cid", upTo: 12, at: 120)
        r.respond("bob", upTo: 11, at: 130)  // covers 10 now, at 130
        let (page, next) = r.readers(of: 10, limit: 10)
        #expect(page.map(\.user) == ["bob", "cid", "ann"])
        #expect(page.map(\.time) == [130, 120, 100])
        #expect(next == nil)
        #expect(r.readers(of: 4, limit: 10).0.map(\.user) == ["cid", "bob", "ann"])
    }

    @Test func pagesWalkEveryReaderOnceAcrossBlocks() {
        var r = ChannelReceipts()
        // 250 members read up to different points; message 70 sits in the second block.
        for i in 0..<250 { r.respond("m\(i)", upTo: UInt64(60 + i % 40), at: UInt64(1_000 + i)) }
        var seen: [ChannelReceipts.Reader] = []
        var cursor: ChannelReceipts.PageCursor?
        repeat {
            let (page, next) = r.readers(of: 70, after: cursor, limit: 100)
            seen += page
            cursor = next
        } while cursor != nil
        #expect(seen.count == r.readerCount(of: 70))
        #expect(Set(seen.map(\.user)).count == seen.count)
        #expect(seen.map(\.time) == seen.map(\.time).sorted(by: >))
    }

    @Test func loadingTheAdvancesRebuildsTheSameState() {
        var r = ChannelReceipts()
        for i in 0..<50 { r.respond("m\(i % 7)", upTo: UInt64(i * 3 + 1), at: UInt64(i)) }
        var copy = ChannelReceipts()
        for a in r.advances { copy.load(a) }
        for seq in [1, 20, 70, 148, 200] as [UInt64] {
            #expect(copy.readerCount(of: seq) == r.readerCount(of: seq))
            #expect(copy.readers(of: seq, limit: 100).0 == r.readers(of: seq, limit: 100).0)
        }
    }

    @Test func countsStayRightAsSeqsGrowPastTheTree() {
        var r = ChannelReceipts()
        r.respond("a", upTo: 3, at: 1)
        r.respond("b", upTo: 5_000, at: 2)
        r.respond("a", upTo: 70_000, at: 3)
        #expect(r.readerCount(of: 4) == 2)
        #expect(r.readerCount(of: 5_001) == 1)
        #expect(r.readerCount(of: 70_000) == 1)
        #expect(r.readerCount(of: 70_001) == 0)
    }

    @Test func aJumpPastClosedMessagesDoesNotMakeAReaderOfThem() {
        var r = ChannelReceipts()
        r.respond("ann", upTo: 2, at: 10)
        // Messages up to 6 are closed to responses; ann's cursor jumps to 9.
        let a = r.respond("ann", upTo: 9, floor: 6, at: 20)
        #expect(a?.from == 6 && a?.to == 9)
        #expect(r.hasRead("ann", 2) && !r.hasRead("ann", 4) && r.hasRead("ann", 7))
        #expect(r.readerCount(of: 2) == 1 && r.readerCount(of: 5) == 0 && r.readerCount(of: 9) == 1)
        #expect(r.readers(of: 5, limit: 10).0.isEmpty)
        #expect(r.respond("bob", upTo: 4, floor: 6, at: 30) == nil, "a response to closed messages only records nothing")
        var copy = ChannelReceipts()
        for adv in r.advances { copy.load(adv) }
        #expect(copy.readerCount(of: 5) == 0 && copy.hasRead("ann", 7))
    }

    @Test func requestsAreKeptInSeqOrderOnceEach() {
        var r = ChannelReceipts()
        let first = r.addRequest(.init(uid: 30, seq: 3, requester: "ann", sentTime: 300))
        let second = r.addRequest(.init(uid: 10, seq: 1, requester: "bob", sentTime: 100))
        let third = r.addRequest(.init(uid: 70, seq: 7, requester: "ann", sentTime: 700))
        let again = r.addRequest(.init(uid: 30, seq: 3, requester: "ann", sentTime: 300))
        #expect(first && second && third && !again)
        #expect(r.requests.map(\.seq) == [1, 3, 7])
        #expect(r.requests(after: 1, through: 7).map(\.uid) == [30, 70])
        #expect(r.requests(after: 0, through: 2).map(\.uid) == [10])
        #expect(r.request(at: 7)?.requester == "ann" && r.request(at: 4) == nil)
        #expect(r.closedSeq(sentBefore: 50) == 0)
        #expect(r.closedSeq(sentBefore: 301) == 3)
        #expect(r.closedSeq(sentBefore: 10_000) == 7)
    }
}
