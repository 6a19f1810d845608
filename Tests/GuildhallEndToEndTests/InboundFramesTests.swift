// A session's inbound framing (README "Web client"): WebSocket messages come out as the
// same protobuf `Frame` payloads as TCP's length-prefixed frames, whether
// binary (`guildhall.proto`) or JSON text (`guildhall.json`).

import GuildhallWire
import Testing
@testable import GuildhallServer

struct InboundFramesTests {
    static func loginFrame() -> GHFrame {
        var f = GHFrame()
        f.request.id = 7
        f.request.login.token = "v1.token"
        return f
    }

    static func drain(_ frames: inout InboundFrames) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        while let p = try frames.next() { out.append(p) }
        return out
    }

    @Test func aBinaryMessageIsOneFramePayload() throws {
        let payload: [UInt8] = try Self.loginFrame().serializedBytes()
        var frames = InboundFrames(webSocket: .proto, maxFrameBytes: 1024)
        let out = WebSocketFrames.clientFrame(0x2, payload).withUnsafeBytes { frames.feed($0) }
        #expect(out?.failed == false && out?.reply.isEmpty == true)
        #expect(try Self.drain(&frames) == [payload])
        #expect(try frames.next() == nil)
    }

    @Test func aJSONTextMessageBecomesTheSameProtobufPayload() throws {
        let frame = Self.loginFrame()
        let json: [UInt8] = try frame.jsonUTF8Bytes()
        var frames = InboundFrames(webSocket: .json, maxFrameBytes: 1024)
        _ = (WebSocketFrames.clientFrame(0x1, json) + WebSocketFrames.clientFrame(0x1, Array("{not json".utf8))).withUnsafeBytes { frames.feed($0) }
        let payloads = try Self.drain(&frames)
        #expect(payloads.count == 2)
        #expect(try GHFrame(serializedBytes: payloads[0]) == frame)
        #expect(payloads[1].isEmpty, "not a JSON Frame: an empty payload, refused as holding no request")
    }

    @Test func theLimitFollowsTheLoginOnBothTransports() throws {
        var frames = InboundFrames(webSocket: .proto, maxFrameBytes: 8)
        frames.maxFrameBytes = 64
        let out = WebSocketFrames.clientFrame(0x2, [UInt8](repeating: 1, count: 40)).withUnsafeBytes { frames.feed($0) }
        #expect(out?.failed == false)
        #expect(try Self.drain(&frames).map(\.count) == [40])
        var tcp = InboundFrames(maxFrameBytes: 8)
        #expect(([0, 0, 0, 2, 9, 9] as [UInt8]).withUnsafeBytes { tcp.feed($0) } == nil, "TCP has nothing to write back")
        #expect(try Self.drain(&tcp) == [[9, 9]])
    }
}
