// The frame decoder gives the same frames however the stream is split, and
// refuses an oversized frame from its length prefix alone.

import Testing
@testable import GuildhallWire

@Suite struct FrameDecoderTests {
    func framed(_ payloads: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        for p in payloads {
            FrameEncoding.appendLength(UInt32(p.count), to: &out)
            out += p
        }
        return out
    }

    let payloads: [[UInt8]] = [[1, 2, 3], [], Array(repeating: 7, count: 1000), [9]]

    func drain(_ d: inout FrameDecoder) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        while let p = try d.next() { out.append(p) }
        return out
    }

    @Test func allAtOnceYieldsEveryFrame() throws {
        var d = FrameDecoder(maxFrameBytes: 2000)
        d.feed(framed(payloads))
        #expect(try drain(&d) == payloads)
        #expect(d.bufferedBytes == 0)
    }

    @Test func roomIsGivenBackOnlyWhenNothingIsHeld() throws {
        var d = FrameDecoder(maxFrameBytes: 2000)
        let bytes = framed(payloads)
        // A whole frame and half of the next: the half stays through a give-back.
        d.feed(Array(bytes[0..<10]))
        d.giveBackRoom()
        #expect(try d.next() == payloads[0])
        d.giveBackRoom()
        #expect(d.bufferedBytes == 3 && d.storage > 0)
        d.feed(Array(bytes[10...]))
        #expect(try drain(&d) == Array(payloads[1...]))
        #expect(d.storage > 0, "an emptied buffer keeps its room for the next read")
        d.giveBackRoom()
        #expect(d.storage == 0)
        d.feed(framed([[5, 6]]))
        #expect(try d.next() == [5, 6])
    }

    @Test func dripFeedingOneByteAtATimeYieldsTheSameFrames() throws {
        var d = FrameDecoder(maxFrameBytes: 2000)
        var out: [[UInt8]] = []
        for byte in framed(payloads) {
            d.feed([byte])
            out += try drain(&d)
        }
        #expect(out == payloads)
    }

    @Test(arguments: [1, 2, 3, 5, 8, 13, 500, 1003])
    func anySplitPointYieldsTheSameFrames(split: Int) throws {
        let bytes = framed(payloads)
        var d = FrameDecoder(maxFrameBytes: 2000)
        d.feed(Array(bytes[..<split]))
        var out = try drain(&d)
        d.feed(Array(bytes[split...]))
        out += try drain(&d)
        #expect(out == payloads)
    }

    @Test func aFrameAtTheLimitPassesAndOneByteMoreIsRefusedFromThePrefix() throws {
        var d = FrameDecoder(maxFrameBytes: 10)
        d.feed(framed([Array(repeating: 1, count: 10)]))
        #expect(try d.next()?.count == 10)
        var e = FrameDecoder(maxFrameBytes: 10)
        e.feed([0, 0, 0, 11])  // only the prefix: the body never arrives
        #expect(throws: FrameDecodeError.frameTooLarge(announced: 11, limit: 10)) { try e.next() }
        #expect(e.bufferedBytes == 0)
    }

    @Test func afterAnOversizedPrefixTheDecoderStaysFailed() {
        var d = FrameDecoder(maxFrameBytes: 10)
        d.feed(Array("GET / HTTP/1.1\r\n".utf8))
        #expect(throws: FrameDecodeError.self) { try d.next() }
        d.feed(framed([[1]]))
        #expect(throws: FrameDecodeError.self) { try d.next() }
    }
}
