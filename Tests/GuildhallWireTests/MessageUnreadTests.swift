// A new message's event leaves out of its shared unread info what the
// message itself says (MessageWire.UnreadHeader.ofMessage), and
// `GHEvent.messageUnread` puts it back: a reader sees the same unread info
// as from the whole header, whatever the recipient's trailer adds.

import Testing
@testable import GuildhallWire

@Suite struct MessageUnreadTests {
    static var message: GHChannelMessage {
        var m = GHChannelMessage()
        m.uid = 1 << 60
        m.serverID = 1 << 59
        m.channelID = 1 << 58
        m.seq = 41
        m.sentTime = 1_800_000_000_123
        m.senderID = "alice"
        m.body.text = "hi"
        return m
    }

    /// The event as a recipient decodes it: the shared bytes and its trailer.
    static func received(_ shared: [UInt8], unread: FrameEncoding.RecipientUnread) throws -> GHEvent {
        var trailer = [UInt8](repeating: 0, count: FrameEncoding.maxTrailerBytes)
        let n = trailer.withUnsafeMutableBytes { FrameEncoding.eventTrailer(seq: 9, unread: unread, into: $0.baseAddress!) }
        return try GHFrame(serializedBytes: shared + trailer[..<n]).event
    }

    @Test(arguments: [
        // The channel's newest message (a live fan-out), and an older one replayed after newer ones were sent.
        (UInt64(41), UInt64(1_800_000_000_123)), (UInt64(50), UInt64(1_800_000_009_000)),
    ])
    func theReaderSeesWhatTheWholeHeaderSaid(lastSeq: UInt64, lastTime: UInt64) throws {
        let m = Self.message
        let encoded: [UInt8] = try m.serializedBytes()
        let whole = MessageWire.UnreadHeader(serverID: m.serverID, channelID: m.channelID, maxCount: 99, lastMessageTime: lastTime, lastSeq: lastSeq)
        let left = MessageWire.UnreadHeader.ofMessage(seq: m.seq, sentTime: m.sentTime, maxCount: 99, lastMessageTime: lastTime, lastSeq: lastSeq)
        let wholeBytes = MessageWire.event(message: encoded, unread: whole), leftBytes = MessageWire.event(message: encoded, unread: left)
        // Server and channel always (ten bytes each here); sent time and seq while the message is the newest.
        #expect(wholeBytes.count - leftBytes.count == (lastSeq == m.seq ? 29 : 20))
        for own in [FrameEncoding.RecipientUnread(unreadCount: 0, mentionedCount: 0, ackTimestamp: 0, readSeq: 0),
                    FrameEncoding.RecipientUnread(unreadCount: 3, mentionedCount: 1, ackTimestamp: 1_700_000_000_000, readSeq: 38)] {
            let fromWhole = try Self.received(wholeBytes, unread: own), fromLeft = try Self.received(leftBytes, unread: own)
            #expect(fromLeft.unread.serverID == 0 && fromLeft.unread.channelID == 0)
            #expect(fromLeft.messageUnread == fromWhole.unread)
            #expect(fromWhole.messageUnread == fromWhole.unread, "a whole header reads as it is")
            #expect(fromLeft.message == m)
        }
    }

    @Test func otherEventsAndGuestsKeepWhatTheyCarry() throws {
        var update = GHEvent()
        update.messageUpdate.message = Self.message
        update.unread.maxCount = 99
        #expect(update.messageUnread == update.unread, "an update's header is whole: its message need not be the newest")
        var guest = GHEvent()
        guest.message = Self.message
        #expect(guest.messageUnread == nil)
    }

    @Test func theJSONRenderingCarriesTheWholeUnreadInfo() throws {
        let m = Self.message
        let shared = MessageWire.event(message: try m.serializedBytes(),
                                       unread: .ofMessage(seq: m.seq, sentTime: m.sentTime, maxCount: 99, lastMessageTime: m.sentTime, lastSeq: m.seq))
        let own = FrameEncoding.RecipientUnread(unreadCount: 2, mentionedCount: 0, ackTimestamp: 0, readSeq: 39)
        let text = JSONFramesTests.jsonText(try GHFrame(serializedBytes: shared), seq: 9, unread: own, cursor: 0)
        let parsed = try GHFrame(jsonUTF8Bytes: text).event
        let binary = try Self.received(shared, unread: own)
        #expect(parsed.unread == binary.messageUnread)
        #expect(parsed.unread.serverID == m.serverID && parsed.unread.lastSeq == m.seq && parsed.unread.unreadCount == 2)
    }
}
