// The room a connection keeps for its writes between flushes: a burst's
// scratch stays while recent flushes used it and goes back after ordinary
// ones, so 10 000 sessions do not each keep room for their largest burst
// (R3's creeping memory). Over a real loopback connection on a libuv loop.

import Glibc
import GuildhallLoop
import Testing

struct ConnectionRoomTests {
    @Test func aBurstsRoomGoesBackAfterOrdinaryFlushes() throws {
        let loop = EventLoop()
        let (c, peer) = try FrameSinkTests.connection(on: loop)
        defer { close(peer) }
        c.setSendBuffer(bytes: 1 << 20)  // the socket takes each flush whole
        func flushWhole() {
            c.flush()
            #expect(c.unwrittenBytes == 0 && !c.hasUnflushed, "the socket took the flush whole")
            var sink = [UInt8](repeating: 0, count: 1 << 16)
            while sink.withUnsafeMutableBytes({ recv(peer, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
        }
        for _ in 0..<80 { c.enqueue([UInt8](repeating: 1, count: 500)) }
        flushWhole()
        let afterBurst = c.scratchRoom
        #expect(afterBurst >= 40_000, "a flush that used its room keeps it")
        for _ in 0..<80 { c.enqueue([UInt8](repeating: 2, count: 500)) }
        flushWhole()
        let again = c.scratchRoom
        #expect(again == afterBurst, "a second burst reuses the room")
        // A flush between bursts (an answer) keeps it: the next burst would grow it again, copying what it holds.
        c.enqueue([UInt8](repeating: 3, count: 100))
        flushWhole()
        let between = c.scratchRoom
        #expect(between == afterBurst)
        for _ in 0..<30 {
            c.enqueue([UInt8](repeating: 4, count: 100))
            flushWhole()
        }
        let ordinary = c.scratchRoom
        #expect(ordinary <= 16 << 10, "ordinary flushes give the burst's room back, down to what a connection keeps")
        c.close()
        for _ in 0..<10 { loop.runOnce() }
        _ = loop.close()
    }

    @Test func aConnectionQuietBetweenTwoReviewsGivesItsRoomBack() throws {
        let loop = EventLoop()
        let (c, peer) = try FrameSinkTests.connection(on: loop)
        defer { close(peer) }
        c.setSendBuffer(bytes: 1 << 20)
        var sink = [UInt8](repeating: 0, count: 1 << 16)
        func answer() {
            c.enqueue([UInt8](repeating: 1, count: 200))  // a login's answer
            c.flush()
            while sink.withUnsafeMutableBytes({ recv(peer, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
        }
        answer()
        let kept = c.scratchRoom
        #expect(kept > 0, "an ordinary flush keeps its room")
        // Busy: a flush between every two reviews keeps the room.
        for _ in 0..<3 { #expect(!c.reviewRoom()); answer() }
        let busy = c.scratchRoom
        #expect(busy == kept)
        #expect(!c.reviewRoom(), "the review after the last flush saw one: the room stays")
        let once = c.scratchRoom
        #expect(once == kept)
        #expect(c.reviewRoom(), "nothing flushed since: it goes back")
        let quiet = c.scratchRoom
        #expect(quiet == 0)
        // Bytes queued and not yet flushed are never given back.
        c.enqueue([UInt8](repeating: 2, count: 300))
        #expect(!c.reviewRoom() && !c.reviewRoom(), "unflushed bytes keep the room however long")
        #expect(c.hasUnflushed && c.scratchRoom >= 300)
        c.flush()
        var got = 0
        for _ in 0..<1000 where got < 300 {
            let n = sink.withUnsafeMutableBytes { recv(peer, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 { got += n; #expect(sink[0..<n].allSatisfy { $0 == 2 }) } else { loop.runOnce() }
        }
        #expect(got == 300, "the queued bytes went out whole")
        c.close()
        for _ in 0..<10 { loop.runOnce() }
        _ = loop.close()
    }

    @Test func aWriteTheSocketCouldNotTakeWholeLeavesTheNextScratchAsLarge() throws {
        let loop = EventLoop()
        let (c, peer) = try FrameSinkTests.connection(on: loop)
        defer { close(peer) }
        c.setSendBuffer(bytes: 8192)
        // A megabyte the peer is not reading: the socket takes some, a queued write the rest (with the scratch).
        for _ in 0..<2000 { c.enqueue([UInt8](repeating: 1, count: 500)) }
        c.flush()
        #expect(c.unwrittenBytes > 0, "the socket could not take a megabyte at once")
        c.enqueue([UInt8](repeating: 2, count: 100))
        let next = c.scratchRoom
        #expect(next >= 1_000_000, "the next scratch starts as large as the one the write took")
        // The peer reads it all (each read lets the socket take more), then the connection closes.
        c.flush()
        var sink = [UInt8](repeating: 0, count: 1 << 16)
        for _ in 0..<100_000 where c.unwrittenBytes > 0 || c.hasUnflushed {
            _ = sink.withUnsafeMutableBytes { recv(peer, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            loop.runOnce()
        }
        c.close()
        for _ in 0..<10 { loop.runOnce() }
        _ = loop.close()
    }
}
