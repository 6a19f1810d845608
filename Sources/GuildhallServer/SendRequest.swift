// A channel send as the server handles it, read straight from the frame's
// bytes when the frame is a plain `Frame{request{id, send_message}}` (the
// hot path: `bench store` spent 18% of the loop in the generated decoder),
// or mapped from the generated message otherwise. Pure; no state.

import GuildhallCore
import GuildhallWire

struct SendRequest {
    var channelID: ChannelID = 0
    /// nil when the body holds no content (a 400 later).
    var content: MessageContent?
    var mentions: [UserID] = []
    var mentionAll = false
    var needReceipt = false
    var clientID = ""
}

extension SendRequest {
    init(_ r: GHSendMessage) {
        channelID = r.channelID
        content = try? r.body.domain()
        mentions = r.mentions
        mentionAll = r.mentionAll
        needReceipt = r.needReceipt
        clientID = r.clientID
    }

    /// Field numbers in guildhall.proto.
    private enum Field {
        static let frameRequest = 1, requestID = 1, requestSendMessage = 50
        static let channelID = 1, body = 2, mentions = 3, mentionAll = 4, needReceipt = 5, clientID = 6
        static let text = 1, custom = 2, customType = 1, customData = 2
    }

    /// The request id and send of a payload that is exactly
    /// Frame{request{id, send_message}}; nil for anything else or anything
    /// unusual (unknown or repeated fields), which the generated decoder then reads.
    static func read(_ payload: [UInt8]) -> (id: UInt64, send: SendRequest)? {
        payload.withUnsafeBytes { buffer in
            var frame = ProtoReader(buffer)
            guard let f = frame.field(), f.number == Field.frameRequest, f.type == .lengthDelimited,
                  var request = frame.nested(), frame.isAtEnd else { return nil }
            var id: UInt64 = 0
            var send: SendRequest?
            var seenID = false
            while !request.isAtEnd {
                guard let f = request.field() else { return nil }
                switch (f.number, f.type) {
                case (Field.requestID, .varint) where !seenID:
                    guard let v = request.varint() else { return nil }
                    id = v
                    seenID = true
                case (Field.requestSendMessage, .lengthDelimited) where send == nil:
                    guard var r = request.nested(), let s = readSend(&r) else { return nil }
                    send = s
                default:
                    return nil
                }
            }
            guard let send else { return nil }
            return (id, send)
        }
    }

    private static func readSend(_ r: inout ProtoReader) -> SendRequest? {
        var s = SendRequest()
        var seen: UInt8 = 0
        func first(_ bit: UInt8) -> Bool {
            defer { seen |= bit }
            return seen & bit == 0
        }
        while !r.isAtEnd {
            guard let f = r.field() else { return nil }
            switch (f.number, f.type) {
            case (Field.channelID, .varint) where first(1):
                guard let v = r.varint() else { return nil }
                s.channelID = v
            case (Field.body, .lengthDelimited) where first(2):
                guard var b = r.nested(), let content = readBody(&b) else { return nil }
                s.content = content
            case (Field.mentions, .lengthDelimited):
                guard let m = r.string() else { return nil }
                s.mentions.append(m)
            case (Field.mentionAll, .varint) where first(4):
                guard let v = r.varint() else { return nil }
                s.mentionAll = v != 0
            case (Field.needReceipt, .varint) where first(8):
                guard let v = r.varint() else { return nil }
                s.needReceipt = v != 0
            case (Field.clientID, .lengthDelimited) where first(16):
                guard let c = r.string() else { return nil }
                s.clientID = c
            default:
                return nil
            }
        }
        return s
    }

    /// The content of a MessageBody; nil when it is empty or unusual (the generated decoder decides).
    private static func readBody(_ r: inout ProtoReader) -> MessageContent? {
        guard let f = r.field() else { return nil }
        var content: MessageContent
        switch (f.number, f.type) {
        case (Field.text, .lengthDelimited):
            guard let t = r.string() else { return nil }
            content = .text(t)
        case (Field.custom, .lengthDelimited):
            guard var c = r.nested() else { return nil }
            var type = "", data: [UInt8] = []
            var seen: UInt8 = 0
            while !c.isAtEnd {
                guard let f = c.field() else { return nil }
                switch (f.number, f.type) {
                case (Field.customType, .lengthDelimited) where seen & 1 == 0:
                    guard let t = c.string() else { return nil }
                    type = t
                    seen |= 1
                case (Field.customData, .lengthDelimited) where seen & 2 == 0:
                    guard let d = c.bytes() else { return nil }
                    data = d
                    seen |= 2
                default:
                    return nil
                }
            }
            content = .custom(type: type, data: data)
        default:
            return nil
        }
        return r.isAtEnd ? content : nil
    }
}
