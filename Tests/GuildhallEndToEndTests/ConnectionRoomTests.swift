// The room a connection keeps for its writes between flushes: a burst's
// scratch stays while flushes use it and goes back at the next ordinary
// one, so 10 000 sessions do not each keep room for their largest burst
// (R3's creeping memory). Over a real loopback connection on a libuv loop.

import Glibc
import GuildhallLoop
import Testing

struct ConnectionRoomTests {
    @Test func aBurstsRoomGoesBackAtTheNextOrdinaryFlush() throws {
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
        for _ in 0..<40 { c.enqueue([UInt8](repeating: 1, count: 500)) }
        flushWhole()
        let afterBurst = c.scratchRoom
        #expect(afterBurst >= 20_000, "a flush that used its room keeps it")
        for _ in 0..<40 { c.enqueue([UInt8](repeating: 2, count: 500)) }
        flushWhole()
        let again = c.scratchRoom
        #expect(again == afterBurst, "a second burst reuses the room")
        c.enqueue([UInt8](repeating: 3, count: 100))
        flushWhole()
        let ordinary = c.scratchRoom
        #expect(ordinary <= 4096, "an ordinary flush gives the burst's room back")
        c.close()
        for _ in 0..<10 { loop.runOnce() }
        _ = loop.close()
    }
}
