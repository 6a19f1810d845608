// Server frames as RFC 6455 §5.2 lays them out: each of the three length
// forms at its edges, and close frames with their code and a reason cut to
// what a control frame may hold.

import GuildhallWire
import Testing

struct WebSocketFramesTests {
    @Test func lengthsUseTheShortestFormAtEveryEdge() {
        for (length, header) in [(0, 2), (125, 2), (126, 4), (0xFFFF, 4), (0x10000, 10)] {
            #expect(WebSocketFrames.headerBytes(length: length) == header, "\(length)")
            let f = WebSocketFrames.frame(.binary, [UInt8](repeating: 7, count: length))
            #expect(f.count == header + length)
            #expect(f[0] == 0x82, "FIN and binary")
            #expect(f[1] & 0x80 == 0, "a server's frames are not masked")
            switch header {
            case 2: #expect(Int(f[1]) == length)
            case 4: #expect(f[1] == 126 && Int(f[2]) << 8 | Int(f[3]) == length)
            default: #expect(f[1] == 127 && f[2..<10].reduce(0) { $0 << 8 | Int($1) } == length)
            }
        }
        #expect(WebSocketFrames.frame(.text, Array("hi".utf8)) == [0x81, 2, 0x68, 0x69])
    }

    @Test func aCloseCarriesItsCodeAndAReasonThatFitsAControlFrame() {
        #expect(WebSocketFrames.close(code: 1009, reason: "too big") == [0x88, 9, 0x03, 0xF1] + Array("too big".utf8))
        let long = WebSocketFrames.close(code: 4000, reason: String(repeating: "é", count: 100))
        #expect(long.count <= 2 + 125, "a control frame's payload is at most 125 bytes")
        #expect(String(validating: long[4...], as: UTF8.self) != nil, "cut at a character's boundary")
    }
}
