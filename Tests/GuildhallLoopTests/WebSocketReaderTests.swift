// WebSocketReader: client frames in, messages and wslay's replies out —
// split at every byte, fragmented, pinged, oversized, unmasked, closed.

import GuildhallLoop
import GuildhallWire
import Testing

struct WebSocketReaderTests {
    static func clientFrame(fin: Bool = true, opcode: UInt8, _ payload: [UInt8], masked: Bool = true) -> [UInt8] {
        WebSocketFrames.clientFrame(opcode, payload, fin: fin, masked: masked)
    }

    @Test func aMessageSplitAtAnyByteComesOutWholeOnce() {
        let payload = (0..<300).map { UInt8($0 & 0xFF) }
        let stream = Self.clientFrame(opcode: 0x2, payload) + Self.clientFrame(opcode: 0x1, Array("hello".utf8))
        for split in 0...stream.count {
            let reader = WebSocketReader(maxMessageBytes: 1 << 20)
            let a = reader.feed(Array(stream[..<split])), b = reader.feed(Array(stream[split...]))
            let messages = a.messages + b.messages
            #expect(messages.map(\.payload) == [payload, Array("hello".utf8)], "split at \(split)")
            #expect(messages.map(\.text) == [false, true])
            #expect(!a.failed && !b.failed && a.reply.isEmpty && b.reply.isEmpty)
        }
    }

    @Test func fragmentsJoinIntoOneMessageWithAPingBetweenThem() {
        let reader = WebSocketReader(maxMessageBytes: 1 << 20)
        let out = reader.feed(Self.clientFrame(fin: false, opcode: 0x1, Array("hel".utf8))
            + Self.clientFrame(opcode: 0x9, [1, 2, 3])
            + Self.clientFrame(opcode: 0x0, Array("lo".utf8)))
        #expect(out.messages.map(\.payload) == [Array("hello".utf8)])
        #expect(out.reply == [0x8A, 3, 1, 2, 3], "the ping is answered with its payload, unmasked")
    }

    @Test func anOversizeMessageIsClosedWith1009() {
        let reader = WebSocketReader(maxMessageBytes: 16)
        let out = reader.feed(Self.clientFrame(opcode: 0x2, [UInt8](repeating: 9, count: 17)))
        #expect(out.failed && out.messages.isEmpty)
        #expect(Array(out.reply.prefix(4)) == [0x88, out.reply[1], 0x03, 0xF1], "close 1009: \(out.reply)")
    }

    @Test func anUnmaskedClientFrameIsClosedWith1002() {
        let reader = WebSocketReader(maxMessageBytes: 1 << 20)
        let out = reader.feed(Self.clientFrame(opcode: 0x2, [1, 2], masked: false))
        #expect(out.failed && out.messages.isEmpty)
        #expect(Array(out.reply.prefix(4)) == [0x88, out.reply[1], 0x03, 0xEA], "close 1002: \(out.reply)")
    }

    @Test func aPeersCloseIsAnsweredAndOursCarriesCodeAndReason() {
        let reader = WebSocketReader(maxMessageBytes: 1 << 20)
        let out = reader.feed(Self.clientFrame(opcode: 0x8, [0x03, 0xE8] + Array("bye".utf8)))
        #expect(out.peerClosed == 1000)
        #expect(out.reply.first == 0x88, "the close is answered")
        let ours = WebSocketReader(maxMessageBytes: 1 << 20).close(code: 4001, reason: "slow consumer")
        #expect(ours == [0x88, UInt8(2 + 13), 0x0F, 0xA1] + Array("slow consumer".utf8))
    }
}
