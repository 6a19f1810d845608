// The FrameSinks' framings carry the same frames (README "Web client"): what a session
// writes through a WebSocket sink, read back as WebSocket frames, is exactly
// what the length-prefixed sink's frames hold (binary), or parses to the same
// frames (JSON text), for answers and for events small (copied) and large
// (the shared payload queued by reference), each with its recipient's
// own fields; and an event's frame is one event part, the shared fields and
// the recipient's merged. Over a real loopback connection on a libuv loop.

import Foundation
import Glibc
import GuildhallLoop
import GuildhallWire
import Testing
@testable import GuildhallServer

struct FrameSinkTests {
    /// A connection on `loop`, and the raw socket at its other end.
    static func connection(on loop: EventLoop) throws -> (TCPConnection, Int32) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        try #require(withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, size) == 0 && listen(listener, 1) == 0 && getsockname(listener, $0, &size) == 0 }
        })
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(withUnsafePointer(to: &addr) { p in p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, size) == 0 } })
        let server = accept(listener, nil, nil)
        let c = try #require(TCPConnection.adopt(loop: loop, socket: server))
        return (c, client)
    }

    /// Everything `write` queues through the sink `make` gives, as the peer reads it.
    static func written(_ make: (TCPConnection) -> any FrameSink, _ write: (any FrameSink) -> Void) throws -> [UInt8] {
        let loop = EventLoop()
        let (c, peer) = try connection(on: loop)
        defer { close(peer) }
        write(make(c))
        c.flush()
        for _ in 0..<100 where c.unwrittenBytes > 0 || c.hasUnflushed { loop.runOnce() }
        c.close()
        for _ in 0..<10 { loop.runOnce() }
        _ = loop.close()
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(peer, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return out }
            out += buffer[0..<n]
        }
    }

    /// A shared message event whose unread part names its channel and cap.
    static func event(_ text: String) -> SharedBytes {
        var f = GHFrame()
        f.event.message.uid = 77
        f.event.message.body.text = text
        f.event.unread.channelID = 5
        f.event.unread.maxCount = 99
        return SharedBytes(FrameEncoding.payload(f))
    }

    /// The payloads of server WebSocket frames (final, unmasked, binary or text).
    static func webSocketPayloads(_ bytes: [UInt8], opcode: UInt8 = 0x2) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var at = 0
        while at < bytes.count {
            #expect(bytes[at] == 0x80 | opcode && bytes[at + 1] & 0x80 == 0)
            var length = Int(bytes[at + 1] & 0x7F), header = 2
            if length == 126 { length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3]); header = 4 }
            if length == 127 { length = bytes[(at + 2)..<(at + 10)].reduce(0) { $0 << 8 | Int($1) }; header = 10 }
            out.append(Array(bytes[(at + header)..<(at + header + length)]))
            at += header + length
        }
        return out
    }

    @Test func webSocketFramesHoldWhatLengthPrefixedFramesHold() throws {
        let small = SharedBytes([UInt8](repeating: 0x42, count: 100)), large = SharedBytes([UInt8](repeating: 0x43, count: 70_000))
        let unread = FrameEncoding.RecipientUnread(unreadCount: 3, mentionedCount: 1, ackTimestamp: 99, readSeq: 7)
        let write: (any FrameSink) -> Void = { sink in
            sink.send(payload: [1, 2, 3])
            sink.sendEvent(small, seq: 1, unread: unread, cursor: 0)
            sink.sendEvent(large, seq: 2, unread: nil, cursor: 5)
            sink.send(payload: [UInt8](repeating: 9, count: 200))
        }
        var tcp = FrameDecoder(maxFrameBytes: 1 << 20)
        tcp.feed(try Self.written({ TCPFrameSink($0) }, write))
        var expected: [[UInt8]] = []
        while let p = try tcp.next() { expected.append(p) }
        #expect(expected.count == 4)
        #expect(Self.webSocketPayloads(try Self.written({ WebSocketFrameSink($0, json: nil) }, write)) == expected)
    }

    @Test func aRecipientsFieldsJoinTheSharedEventInOnePart() throws {
        let small = Self.event("hi"), large = Self.event(String(repeating: "é", count: 40_000))
        let unread = FrameEncoding.RecipientUnread(unreadCount: 3, mentionedCount: 1, ackTimestamp: 99, readSeq: 7)
        for webSocket in [false, true] {
            let bytes = try Self.written({ webSocket ? WebSocketFrameSink($0, json: nil) as any FrameSink : TCPFrameSink($0) }) { s in
                s.sendEvent(small, seq: 1, unread: unread, cursor: 0)
                s.sendEvent(large, seq: 300, unread: nil, cursor: 1 << 40)
            }
            var frames = webSocket ? Self.webSocketPayloads(bytes) : []
            var tcp = FrameDecoder(maxFrameBytes: 1 << 20)
            tcp.feed(webSocket ? [] : bytes)
            while let p = try tcp.next() { frames.append(p) }
            try #require(frames.count == 2)
            for f in frames {  // Frame{event}: its tag, a length that runs to the end
                #expect(FrameEncoding.sharedEventFields(f, count: f.count) != nil)
            }
            let first = try GHFrame(serializedBytes: frames[0]).event, second = try GHFrame(serializedBytes: frames[1]).event
            #expect(first.seq == 1 && first.message.body.text == "hi" && first.cursor == 0)
            #expect(first.unread.channelID == 5 && first.unread.maxCount == 99 && first.unread.unreadCount == 3)
            #expect(first.unread.mentionedCount == 1 && first.unread.ackTimestamp == 99 && first.unread.readSeq == 7)
            #expect(second.seq == 300 && second.message.body.text.count == 40_000 && second.cursor == 1 << 40)
            #expect(second.unread.channelID == 5 && second.unread.unreadCount == 0)
        }
    }

    @Test func textFramesParseToWhatLengthPrefixedFramesHold() throws {
        var answer = GHFrame()
        answer.response.id = 3
        answer.response.error.message = "no"
        let small = Self.event("hi"), large = Self.event(String(repeating: "é", count: 40_000))
        let unread = FrameEncoding.RecipientUnread(unreadCount: 3, mentionedCount: 1, ackTimestamp: 99, readSeq: 7)
        let write: (any FrameSink) -> Void = { sink in
            sink.send(answer)
            sink.sendEvent(small, seq: 1, unread: unread, cursor: 0)
            sink.sendEvent(large, seq: 2, unread: nil, cursor: 5)
            sink.sendEvent(small, seq: 3, unread: nil, cursor: 0)
        }
        var tcp = FrameDecoder(maxFrameBytes: 1 << 20)
        tcp.feed(try Self.written({ TCPFrameSink($0) }, write))
        var expected: [GHFrame] = []
        while let p = try tcp.next() { expected.append(try GHFrame(serializedBytes: p)) }
        #expect(expected.count == 4)
        let texts = Self.webSocketPayloads(try Self.written({ WebSocketFrameSink($0, json: JSONEvents()) }, write), opcode: 0x1)
        #expect(try texts.map { try GHFrame(jsonUTF8Bytes: $0) } == expected)
    }
}
