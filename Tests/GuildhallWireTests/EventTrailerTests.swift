// An event encoded once plus a recipient's own fields (in the same event
// part, or as a second part) decodes, in the standard protobuf runtime, as
// one event carrying both.

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
        let n = trailer.withUnsafeMutableBytes { FrameEncoding.eventTrailer(seq: seq, unread: nil, into: $0.baseAddress!) }
        #expect(n == FrameEncoding.eventTrailerLength(seq: seq, unread: nil))
        bytes += trailer[..<n]
        let decoded = try GHFrame(serializedBytes: bytes)
        #expect(decoded.event.seq == seq)
        #expect(decoded.event.message == message)
        #expect(!decoded.event.hasUnread)
    }

    @Test(arguments: [
        FrameEncoding.RecipientUnread(unreadCount: 0, mentionedCount: 0, ackTimestamp: 0, readSeq: 0),
        FrameEncoding.RecipientUnread(unreadCount: 5, mentionedCount: 1, ackTimestamp: 1_800_000_000_000, readSeq: 12),
        FrameEncoding.RecipientUnread(unreadCount: .max, mentionedCount: .max, ackTimestamp: .max, readSeq: .max),
    ])
    func theTrailerMergesTheRecipientsUnreadIntoTheSharedUnread(unread: FrameEncoding.RecipientUnread) throws {
        var frame = GHFrame()
        frame.event.message.uid = 7
        frame.event.unread.channelID = 99
        frame.event.unread.maxCount = 99
        frame.event.unread.lastSeq = 17
        var bytes = FrameEncoding.payload(frame)
        var trailer = [UInt8](repeating: 0, count: FrameEncoding.maxTrailerBytes)
        let n = trailer.withUnsafeMutableBytes { FrameEncoding.eventTrailer(seq: 300, unread: unread, into: $0.baseAddress!) }
        #expect(n == FrameEncoding.eventTrailerLength(seq: 300, unread: unread))
        bytes += trailer[..<n]
        let e = try GHFrame(serializedBytes: bytes).event
        #expect(e.seq == 300 && e.message.uid == 7)
        #expect(e.unread.channelID == 99 && e.unread.maxCount == 99 && e.unread.lastSeq == 17)
        #expect(e.unread.unreadCount == unread.unreadCount && e.unread.mentionedCount == unread.mentionedCount)
        #expect(e.unread.ackTimestamp == unread.ackTimestamp && e.unread.readSeq == unread.readSeq)
    }

    @Test(arguments: [UInt64(0), 1, 1 << 40, UInt64.max])
    func theTrailerCarriesTheInboxCursorWithTheLargestUnreadWithinItsBound(cursor: UInt64) throws {
        var frame = GHFrame()
        frame.event.message.uid = 7
        var bytes = FrameEncoding.payload(frame)
        let unread = FrameEncoding.RecipientUnread(unreadCount: .max, mentionedCount: .max, ackTimestamp: .max, readSeq: .max)
        var trailer = [UInt8](repeating: 0, count: FrameEncoding.maxTrailerBytes)
        let n = trailer.withUnsafeMutableBytes { FrameEncoding.eventTrailer(seq: .max, unread: unread, cursor: cursor, into: $0.baseAddress!) }
        #expect(n == FrameEncoding.eventTrailerLength(seq: .max, unread: unread, cursor: cursor))
        #expect(n <= FrameEncoding.maxTrailerBytes)
        bytes += trailer[..<n]
        let e = try GHFrame(serializedBytes: bytes).event
        #expect(e.seq == .max && e.cursor == cursor && e.unread.readSeq == .max && e.message.uid == 7)
    }

    @Test(arguments: [UInt64(1), 300, UInt64.max])
    func aRecipientsOwnFieldsInsideTheSharedEventDecodeAsOneEvent(seq: UInt64) throws {
        var frame = GHFrame()
        frame.event.message.uid = 7
        frame.event.message.body.text = String(repeating: "x", count: 200)
        frame.event.unread.maxCount = 99
        let shared = FrameEncoding.payload(frame)
        let start = try #require(FrameEncoding.sharedEventFields(shared, count: shared.count))
        let unread = FrameEncoding.RecipientUnread(unreadCount: 5, mentionedCount: 0, ackTimestamp: 0, readSeq: 12)
        let own = FrameEncoding.recipientFieldsLength(seq: seq, unread: unread, cursor: 9)
        let eventLength = shared.count - start + own
        var out = [UInt8](repeating: 0, count: FrameEncoding.eventHeaderLength(eventLength) + eventLength)
        out.withUnsafeMutableBytes { p in
            let h = FrameEncoding.writeEventHeader(eventLength, into: p.baseAddress!)
            #expect(h == FrameEncoding.eventHeaderLength(eventLength))
            shared[start...].withUnsafeBytes { (p.baseAddress! + h).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            #expect(FrameEncoding.writeRecipientFields(seq: seq, unread: unread, cursor: 9, into: p.baseAddress! + h + shared.count - start) == own)
        }
        let e = try GHFrame(serializedBytes: out).event
        #expect(e.seq == seq && e.cursor == 9 && e.message == frame.event.message)
        #expect(e.unread.maxCount == 99 && e.unread.unreadCount == 5 && e.unread.readSeq == 12)
    }

    @Test func onlyALoneEventIsTakenApart() {
        var frame = GHFrame()
        frame.event.message.uid = 7
        let event = FrameEncoding.payload(frame)
        #expect(FrameEncoding.sharedEventFields(event, count: event.count) == 2)
        #expect(FrameEncoding.sharedEventFields(event, count: event.count - 1) == nil)  // cut short
        #expect(FrameEncoding.sharedEventFields(event + [0x08, 0x01], count: event.count + 2) == nil)  // another part follows
        var answer = GHFrame()
        answer.response.id = 3
        let other = FrameEncoding.payload(answer)
        #expect(FrameEncoding.sharedEventFields(other, count: other.count) == nil)
        #expect(FrameEncoding.sharedEventFields([0x1a], count: 1) == nil)
    }
}
