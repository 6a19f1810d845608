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

    /// Frames RFC 6455 forbids are closed with 1002 (protocol error), each with a status code.
    @Test(arguments: [
        WebSocketFrames.clientFrame(0x9, [UInt8](repeating: 1, count: 126)),  // a control frame over 125 bytes
        WebSocketFrames.clientFrame(0x9, [1, 2], fin: false),  // a fragmented control frame
        [0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 1, 1, 2, 3, 4],  // a 64-bit length with its top bit set
        WebSocketFrames.clientFrame(0x3, [1]),  // a reserved opcode
        WebSocketFrames.clientFrame(0x0, [1]),  // a continuation of nothing
    ])
    func aForbiddenFrameIsClosedWith1002(_ stream: [UInt8]) {
        let out = WebSocketReader(maxMessageBytes: 1 << 20).feed(stream)
        #expect(out.failed && out.messages.isEmpty)
        #expect(out.reply.count >= 4 && out.reply[0] == 0x88 && Array(out.reply[2...3]) == [0x03, 0xEA], "close 1002: \(out.reply)")
    }

    /// Random and mutated streams, fed at random split points: the reader
    /// never traps, and a stream it calls broken stays broken.
    @Test func randomAndMutatedStreamsNeverTrap() {
        var rng = SystemRandomNumberGenerator()
        let valid = Self.clientFrame(opcode: 0x2, Array(repeating: 7, count: 40)) + Self.clientFrame(opcode: 0x1, Array("hi".utf8))
        for i in 0..<3000 {
            var stream: [UInt8]
            if i % 2 == 0 {
                stream = (0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            } else {
                stream = valid
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    stream[Int.random(in: 0..<stream.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                }
            }
            let reader = WebSocketReader(maxMessageBytes: 64)
            let split = Int.random(in: 0...stream.count, using: &rng)
            let a = reader.feed(Array(stream[..<split])), b = reader.feed(Array(stream[split...]))
            #expect(!a.failed || b.failed || b.messages.isEmpty, "after a failure nothing more is read")
            #expect((a.messages + b.messages).allSatisfy { $0.payload.count <= 64 })
        }
    }
}
