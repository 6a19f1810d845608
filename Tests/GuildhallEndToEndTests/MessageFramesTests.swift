// The hand-written send path against the generated protobuf code: the bytes
// of an answer and a live event are the generated encoder's bytes, and the
// send reader either agrees with the generated decoder or steps aside.

import Foundation
import GuildhallCore
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct MessageFramesTests {
    static let records: [MessageRecord] = [
        MessageRecord(uid: 1, serverID: 2, channelID: 3, seq: 4, sender: "alice", sentTime: 1_800_000_000_000,
                      content: .text("hi"), mentions: [], mentionAll: false, needReceipt: false, clientID: ""),
        MessageRecord(uid: .max, serverID: 0, channelID: 1 << 40, seq: 1, sender: "bøb", sentTime: 5,
                      content: .text(String(repeating: "ü", count: 9_000)), mentions: ["alice", "carol"],
                      mentionAll: true, needReceipt: true, clientID: "c-1"),
        MessageRecord(uid: 300, serverID: 128, channelID: 127, seq: 0, sender: "x", sentTime: 0,
                      content: .custom(type: "card", data: []), mentions: [""], mentionAll: false, needReceipt: true, clientID: ""),
        MessageRecord(uid: 9, serverID: 9, channelID: 9, seq: 9, sender: "y", sentTime: 9,
                      content: .custom(type: "blob", data: Array(repeating: 0xFF, count: 200)), mentions: [], mentionAll: false,
                      needReceipt: false, clientID: String(repeating: "k", count: 128)),
    ]

    @Test(arguments: records)
    func theMessageAndItsAnswerAreTheGeneratedEncodersBytes(record: MessageRecord) throws {
        let message = record.encoded
        #expect(message == (try GHChannelMessage(record).serializedBytes()))
        var frame = GHFrame()
        frame.response.id = 77
        frame.response.message = GHChannelMessage(record)
        #expect(MessageWire.answer(id: 77, message: message) == FrameEncoding.payload(frame))
        // As a connection's write buffer gets it (TCPFrameSink.sendAnswer), for ids of every varint length.
        for id: UInt64 in [0, 77, 300, 1 << 40, .max] {
            frame.response.id = id
            var written = [UInt8](repeating: 0, count: MessageWire.answerSize(id: id, messageBytes: message.count))
            written.withUnsafeMutableBufferPointer { buffer in
                var w = ProtoCursor(buffer.baseAddress!)
                MessageWire.writeAnswer(id: id, message: message, into: &w)
                #expect(w.at == buffer.baseAddress! + buffer.count)
            }
            #expect(written == FrameEncoding.payload(frame))
        }
    }

    /// A home encodes each send over the last one's bytes (`encode(into:)`):
    /// every record, after every other, longer or shorter, comes out whole and alone.
    @Test func aMessageEncodedOverAnotherIsTheGeneratedEncodersBytes() throws {
        var reused: [UInt8] = []
        for before in Self.records {
            for record in Self.records {
                before.encode(into: &reused)
                let kept = reused  // shared now: the next encoding must leave this one as it is
                record.encode(into: &reused)
                #expect(reused == (try GHChannelMessage(record).serializedBytes()))
                #expect(kept == (try GHChannelMessage(before).serializedBytes()))
            }
        }
    }

    @Test(arguments: records)
    func theLiveEventIsTheGeneratedEncodersBytes(record: MessageRecord) throws {
        let header = MessageWire.UnreadHeader(serverID: record.serverID, channelID: record.channelID, maxCount: 99,
                                                lastMessageTime: record.sentTime, lastSeq: record.seq)
        var event = GHEvent()
        event.message = GHChannelMessage(record)
        event.unread.serverID = record.serverID
        event.unread.channelID = record.channelID
        event.unread.maxCount = 99
        event.unread.lastMsgTime = record.sentTime
        event.unread.lastSeq = record.seq
        var frame = GHFrame()
        frame.event = event
        #expect(MessageWire.event(message: record.encoded, unread: header) == FrameEncoding.payload(frame))
    }

    @Test(arguments: records)
    func theGuestEventIsTheGeneratedEncodersBytes(record: MessageRecord) throws {
        var frame = GHFrame()
        frame.event.message = GHChannelMessage(record)
        #expect(MessageWire.event(message: record.encoded) == FrameEncoding.payload(frame))
    }

    static func sendFrame(_ record: MessageRecord, id: UInt64) -> GHFrame {
        var send = GHSendMessage()
        send.channelID = record.channelID
        send.body = GHMessageBody(record.content)
        send.mentions = record.mentions
        send.mentionAll = record.mentionAll
        send.needReceipt = record.needReceipt
        send.clientID = record.clientID
        var frame = GHFrame()
        frame.request.id = id
        frame.request.sendMessage = send
        return frame
    }

    @Test(arguments: records)
    func theSendReaderReadsWhatTheGeneratedEncoderWrote(record: MessageRecord) throws {
        let bytes = FrameEncoding.payload(Self.sendFrame(record, id: record.uid))
        let read = try #require(SendRequest.read(bytes))
        #expect(read.id == record.uid)
        #expect(read.send.channelID == record.channelID)
        #expect(read.send.content == record.content)
        #expect(read.send.mentions == record.mentions)
        #expect(read.send.mentionAll == record.mentionAll)
        #expect(read.send.needReceipt == record.needReceipt)
        #expect(read.send.clientID == record.clientID)
    }

    @Test func theSendReaderStepsAsideForAnythingElse() throws {
        var login = GHFrame()
        login.request.login.token = "t"
        // A field this server does not know (31, varint 1) inside the send.
        let sendBytes: [UInt8] = try Self.sendFrame(Self.records[0], id: 1).request.sendMessage.serializedBytes() + [0xF8, 0x01, 0x01]
        var unknown = ProtoWriter()
        unknown.message(1) { $0.uint(1, 1); $0.embedded(50, sendBytes) }
        var noBody = Self.sendFrame(Self.records[0], id: 1)
        noBody.request.sendMessage.clearBody()
        var emptyBody = Self.sendFrame(Self.records[0], id: 1)
        emptyBody.request.sendMessage.body = GHMessageBody()
        let good = FrameEncoding.payload(Self.sendFrame(Self.records[0], id: 1))
        let cases: [[UInt8]] = [
            [],
            FrameEncoding.payload(login),
            unknown.bytes,
            FrameEncoding.payload(emptyBody),
            good + good,  // two requests merged: the generated decoder's business
            Array(good.dropLast()),
            Self.oneByteText(0xFF),  // not UTF-8
            // A key in 6 bytes (field 1, varint, padded): swift-protobuf refuses keys over 5 bytes (a fuzzing finding).
            [0x0A, 0x0E, 0x08, 0x01, 0x92, 0x03, 0x09, 0x88, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01, 0x12, 0x00],
        ]
        for bytes in cases { #expect(SendRequest.read(bytes) == nil, "\(bytes.prefix(16))") }
        for bytes in cases.suffix(1) { #expect(throws: (any Error).self) { try GHFrame(serializedBytes: bytes) } }
        #expect(SendRequest.read(Self.oneByteText(0x41))?.send.content == .text("A"))
        #expect(SendRequest.read(good)?.send.content == Self.records[0].content)
        // No body at all is read as no content: the send then fails with a 400, as through the generated decoder.
        let bodiless = try #require(SendRequest.read(FrameEncoding.payload(noBody)))
        #expect(bodiless.send.content == nil && bodiless.send.channelID == Self.records[0].channelID)
    }

    /// Frame{request{id: 1, send_message{channel_id: 1, body{text: [byte]}}}}, written out by hand.
    static func oneByteText(_ byte: UInt8) -> [UInt8] {
        [0x0A, 0x0C, 0x08, 0x01, 0x92, 0x03, 0x07, 0x08, 0x01, 0x12, 0x03, 0x0A, 0x01, byte]
    }

    /// Every prefix and single-byte change of a good frame: the reader never
    /// traps, and whatever it accepts the generated decoder reads the same way.
    @Test func theSendReaderNeverDisagreesWithTheGeneratedDecoder() throws {
        let good = FrameEncoding.payload(Self.sendFrame(Self.records[1], id: 5).withShortText)
        var accepted = 0
        for v in FrameVariants.of(good) {
            guard let read = SendRequest.read(v) else { continue }
            accepted += 1
            let frame = try GHFrame(serializedBytes: v)
            #expect(frame.request.id == read.id)
            let expected = SendRequest(frame.request.sendMessage)
            #expect(read.send.channelID == expected.channelID)
            #expect(read.send.content == expected.content)
            #expect(read.send.mentions == expected.mentions)
            #expect(read.send.mentionAll == expected.mentionAll)
            #expect(read.send.needReceipt == expected.needReceipt)
            #expect(read.send.clientID == expected.clientID)
        }
        #expect(accepted > good.count)
    }

    /// Where the channel message of an event stands, read by hand: the
    /// generated decoder's values for every kind of event payload the server
    /// makes, nothing for other events, and never a different answer for any
    /// prefix or changed byte.
    @Test func thePlaceReaderReadsWhatTheGeneratedDecoderReads() throws {
        func place(_ bytes: [UInt8]) -> (server: UInt64, channel: UInt64, seq: UInt64)? {
            guard case .place(let server, let channel, let seq) = bytes.withUnsafeBytes({ MessageWire.messagePlace($0) }) else { return nil }
            return (server, channel, seq)
        }
        func generated(_ bytes: [UInt8]) -> (server: UInt64, channel: UInt64, seq: UInt64)? {
            guard let f = try? GHFrame(serializedBytes: bytes), case .message(let m)? = f.event.body else { return nil }
            return (m.serverID, m.channelID, m.seq)
        }
        var good: [[UInt8]] = []
        for r in Self.records {
            let header = MessageWire.UnreadHeader(serverID: r.serverID, channelID: r.channelID, maxCount: 99, lastMessageTime: r.sentTime, lastSeq: r.seq)
            good.append(MessageWire.event(message: r.encoded, unread: header))
            good.append(MessageWire.event(message: r.encoded))
            let p = try #require(place(good.last!))
            #expect(p.server == r.serverID && p.channel == r.channelID && p.seq == r.seq)
        }
        // Other events: not a message.
        var update = GHFrame()
        update.event.messageUpdate.message.serverID = 4
        var typing = GHFrame()
        typing.event.typing.channelID = 3
        for f in [update, typing, GHFrame.with { $0.response.id = 3 }] { #expect(place(FrameEncoding.payload(f)) == nil) }
        // A later body of another kind replaces the message, as protobuf merges.
        let merged = good[0] + FrameEncoding.payload(typing)
        #expect(place(merged) == nil && generated(merged) == nil)
        // Fields of the wrong wire type, or unknown ones, replace nothing (found by the fuzzer):
        // a varint where the frame's request would be, an unknown body number, a mentions field as a varint.
        let odd = good[0] + [0x08, 0x08] + [0x1a, 0x04, 0xe2, 0x03, 0x01, 0x00] + [0x1a, 0x04, 0x52, 0x02, 0x40, 0x08]
        let want = try #require(generated(odd))
        let got = try #require(place(odd))
        #expect(got.server == want.server && got.channel == want.channel && got.seq == want.seq)
        // A group (which the reader leaves to the generated decoder) is unreadable, never a wrong answer.
        let group: [UInt8] = [0x1a, 0x0e, 0x08, 0x08, 0x52, 0x00, 0x10, 0x06, 0x68, 0x28, 0x6b, 0x6c, 0x52, 0x00, 0x20, 0x04]
        #expect(group.withUnsafeBytes { MessageWire.messagePlace($0) } == .unreadable)
        #expect(generated(group) != nil)
        // A message replaced by a later body of the event (a presence, field 23; the fuzzer's finding) is not a message.
        let replaced: [UInt8] = [0x1a, 0x08, 0x52, 0x00, 0xb8, 0x01, 0x08, 0xba, 0x01, 0x00]
        #expect(place(replaced) == nil && generated(replaced) == nil)
        // Every body of the event's oneof (read from Proto/) is one the reader knows replaces a message.
        let proto = try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Proto/guildhall.proto"), encoding: .utf8)
        let event = proto.components(separatedBy: "message Event {")[1].components(separatedBy: "oneof body {")[1].components(separatedBy: "\n  }")[0]
        let numbers = event.split(separator: "\n").compactMap { line -> Int? in
            guard !line.trimmingCharacters(in: .whitespaces).hasPrefix("//"), let eq = line.lastIndex(of: "=") else { return nil }
            return Int(line[line.index(after: eq)...].trimmingCharacters(in: CharacterSet(charactersIn: " ;")))
        }
        #expect(Set(numbers) == Set(WireField.Event.bodies), "the event's bodies in Proto/: \(numbers.sorted())")
        var compared = 0
        // The events of the short records (the 9 000-character text would make each variant slow to decode).
        for g in [good[0], good[1], good[4], good[5]] {
            var variants: [[UInt8]] = (0...g.count).map { Array(g.prefix($0)) }
            for i in g.indices where i % 3 == 0 {
                for b: UInt8 in [0x00, 0x7F, 0x80, 0xFF, g[i] ^ 0x10] {
                    var v = g
                    v[i] = b
                    variants.append(v)
                }
            }
            for v in variants {
                let read = v.withUnsafeBytes { MessageWire.messagePlace($0) }
                // Unreadable: the caller asks the generated decoder; what that decoder refuses
                // (a string field with bad UTF-8, which the reader does not look at) is not compared.
                guard read != .unreadable, (try? GHFrame(serializedBytes: v)) != nil else { continue }
                let want = generated(v)
                let got = place(v)
                #expect(got?.server == want?.server && got?.channel == want?.channel && got?.seq == want?.seq, "\(v)")
                compared += 1
            }
        }
        #expect(compared > 100)
    }
}

private extension GHFrame {
    var withShortText: GHFrame {
        var f = self
        f.request.sendMessage.body.text = "hello"
        return f
    }
}
