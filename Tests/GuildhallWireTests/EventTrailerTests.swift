// An event encoded once plus a per-session seq trailer decodes, in the
// standard protobuf runtime, as one event carrying both.

import Testing
@testable import GuildhallWire

@Suite struct EventTrailerTests {
    @Test(arguments: [UInt64(1), 127, 128, 300, 1 << 35, UInt64.max])
    func theTrailerMergesTheSeqIntoTheSharedEvent(seq: UInt64) throws {
        var message = GHChannelMessage()
        message.uid = 42
        message.body.text = "hello"
        var frame = GHFrame()
        frame.event.message = message
        var bytes = FrameEncoding.payload(frame)
        var trailer = [UInt8](repeating: 0, count: FrameEncoding.maxTrailerBytes)
        let n = trailer.withUnsafeMutableBytes { FrameEncoding.eventSeqTrailer(seq, into: $0.baseAddress!) }
        #expect(n == FrameEncoding.eventSeqTrailerLength(seq))
        bytes += trailer[..<n]
        let decoded = try GHFrame(serializedBytes: bytes)
        #expect(decoded.event.seq == seq)
        #expect(decoded.event.message == message)
    }
}
