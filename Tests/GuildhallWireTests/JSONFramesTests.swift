// A shared event rendered to JSON once, with each recipient's part written
// around it, parses (by swift-protobuf's JSON decoder) to exactly the frame
// a binary session decodes from the same payload plus its trailer.

import Testing
@testable import GuildhallWire

@Suite struct JSONFramesTests {
    /// What a JSON session receives for `frame` shared, with this recipient's part.
    static func jsonText(_ frame: GHFrame, seq: UInt64, unread: FrameEncoding.RecipientUnread?, cursor: UInt64) -> [UInt8] {
        let payload = FrameEncoding.payload(frame)
        let shared = payload.withUnsafeBytes { JSONFrames.SharedEvent(payload: $0) }
        var head = [UInt8](repeating: 0, count: shared.maxHeadBytes)
        let n = head.withUnsafeMutableBytes { JSONFrames.head(shared, seq: seq, unread: unread, cursor: cursor, into: $0.baseAddress!) }
        #expect(n <= shared.maxHeadBytes)
        return Array(head[..<n]) + shared.body + JSONFrames.tail
    }

    /// What a binary session reads for the same: the frame it decodes, with
    /// a message's unread info as the SDK completes it (`messageUnread`).
    static func binaryFrame(_ frame: GHFrame, seq: UInt64, unread: FrameEncoding.RecipientUnread?, cursor: UInt64) throws -> GHFrame {
        var bytes = FrameEncoding.payload(frame)
        var trailer = [UInt8](repeating: 0, count: FrameEncoding.maxTrailerBytes)
        let n = trailer.withUnsafeMutableBytes { FrameEncoding.eventTrailer(seq: seq, unread: unread, cursor: cursor, into: $0.baseAddress!) }
        bytes += trailer[..<n]
        var read = try GHFrame(serializedBytes: bytes)
        if let whole = read.event.messageUnread { read.event.unread = whole }
        return read
    }

    static var message: GHFrame {
        var frame = GHFrame()
        frame.event.message.uid = 1 << 62
        frame.event.message.channelID = 9
        frame.event.message.body.text = "héllo \"quoted\" \n ✓"
        return frame
    }

    static let unreads: [FrameEncoding.RecipientUnread?] = [
        nil,
        FrameEncoding.RecipientUnread(unreadCount: 0, mentionedCount: 0, ackTimestamp: 0, readSeq: 0),
        FrameEncoding.RecipientUnread(unreadCount: 5, mentionedCount: 0, ackTimestamp: 1_800_000_000_000, readSeq: 12),
        FrameEncoding.RecipientUnread(unreadCount: .max, mentionedCount: .max, ackTimestamp: .max, readSeq: .max),
    ]

    @Test(arguments: [UInt64(1), 300, .max], [UInt64(0), 77])
    func aMessageWithEachRecipientsPartParsesAsTheBinaryFrame(seq: UInt64, cursor: UInt64) throws {
        for unread in Self.unreads {
            for sharedUnread in [false, true] {
                var frame = Self.message
                if sharedUnread {
                    frame.event.unread.channelID = 9
                    frame.event.unread.maxCount = 99
                    frame.event.unread.lastSeq = 17
                }
                let text = Self.jsonText(frame, seq: seq, unread: unread, cursor: cursor)
                let parsed = try GHFrame(jsonUTF8Bytes: text)
                #expect(parsed == (try Self.binaryFrame(frame, seq: seq, unread: unread, cursor: cursor)), "\(String(decoding: text, as: UTF8.self))")
            }
        }
    }

    @Test func sharedNumbersAreKeptWhereTheRecipientHasNoneAndACursorInThePayloadSurvives() throws {
        var frame = Self.message
        frame.event.unread.unreadCount = 4
        frame.event.unread.readSeq = 3
        frame.event.cursor = 55
        frame.event.offline = true
        frame.event.left = 2
        let mine = FrameEncoding.RecipientUnread(unreadCount: 8, mentionedCount: 1, ackTimestamp: 0, readSeq: 0)
        for cursor in [UInt64(0), 60] {
            let parsed = try GHFrame(jsonUTF8Bytes: Self.jsonText(frame, seq: 2, unread: mine, cursor: cursor))
            #expect(parsed == (try Self.binaryFrame(frame, seq: 2, unread: mine, cursor: cursor)))
            #expect(parsed.event.unread.unreadCount == 8 && parsed.event.unread.readSeq == 3 && parsed.event.offline)
        }
    }

    @Test func anEventWithNoBodyIsStillOneObject() throws {
        var frame = GHFrame()
        frame.event.resumed = GHResumed()
        let text = Self.jsonText(frame, seq: 4, unread: nil, cursor: 0)
        #expect(try GHFrame(jsonUTF8Bytes: text) == (try Self.binaryFrame(frame, seq: 4, unread: nil, cursor: 0)))
        let empty = Self.jsonText(GHFrame(), seq: 4, unread: nil, cursor: 0)
        #expect(String(decoding: empty, as: UTF8.self) == #"{"event":{"seq":"4"}}"#)
    }

    @Test func framesAndPayloadsBecomeTheProto3Mapping() throws {
        var frame = GHFrame()
        frame.response.id = 12
        frame.response.error.code = .notFound
        frame.response.error.message = "no such channel"
        let text = String(decoding: JSONFrames.text(frame), as: UTF8.self)
        #expect(text.contains(#""id":"12""#) && text.contains(#""NOT_FOUND""#))
        #expect(JSONFrames.text(payload: FrameEncoding.payload(frame)) == JSONFrames.text(frame))
        #expect(JSONFrames.text(payload: [0xFF, 0xFF, 0xFF]) == Array("{}".utf8))
    }
}
