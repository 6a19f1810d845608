// The hot path's frames by hand (a send, its answer and its live event), in
// the generated encoder's exact bytes: the generated code's generic visitors
// and storage classes cost a third of the loop per send (perf, `bench
// store`). Tests compare every function here with the generated code. The
// types are the wire's own, not the domain's: the server maps to them. Pure.

/// A message body as the wire carries it.
public enum WireBody: Sendable, Equatable {
    case text(String)
    case custom(type: String, data: [UInt8])
}

/// The fields of a ChannelMessage that answers and live events carry.
public struct WireMessage: Sendable, Equatable {
    public var uid: UInt64, serverID: UInt64, channelID: UInt64, seq: UInt64
    public var senderID: String
    public var sentTime: UInt64
    public var body: WireBody
    public var mentions: [String]
    public var mentionAll: Bool, needReceipt: Bool
    public var clientID: String

    public init(uid: UInt64, serverID: UInt64, channelID: UInt64, seq: UInt64, senderID: String, sentTime: UInt64, body: WireBody,
                mentions: [String], mentionAll: Bool, needReceipt: Bool, clientID: String) {
        self.uid = uid; self.serverID = serverID; self.channelID = channelID; self.seq = seq; self.senderID = senderID
        self.sentTime = sentTime; self.body = body; self.mentions = mentions; self.mentionAll = mentionAll
        self.needReceipt = needReceipt; self.clientID = clientID
    }
}

/// What a plain Frame{request{id, send_message}} holds.
public struct PlainSend: Sendable, Equatable {
    public var channelID: UInt64 = 0
    /// nil when the body holds no content.
    public var body: WireBody?
    public var mentions: [String] = []
    public var mentionAll = false
    public var needReceipt = false
    public var clientID = ""
    public init() {}
}

public enum MessageWire {
    private typealias F = WireField

    /// ChannelMessage{...} as answers and live events carry it (receipt: `requested` only).
    public static func channelMessage(_ m: WireMessage) -> [UInt8] {
        var out: [UInt8] = []
        channelMessage(m, into: &out)
        return out
    }

    /// The same, written over `out` (in its storage when it is unshared and large enough).
    public static func channelMessage(_ m: WireMessage, into out: inout [UInt8]) {
        typealias S = ProtoSize
        let custom: Int, body: Int
        switch m.body {
        case .text(let t):
            custom = 0
            body = S.lengthDelimited(F.MessageBody.text, t.utf8.count)  // a oneof member: written even when empty
        case .custom(let type, let data):
            custom = S.nonEmpty(F.CustomBody.type, type.utf8.count) + S.nonEmpty(F.CustomBody.data, data.count)
            body = S.lengthDelimited(F.MessageBody.custom, custom)
        }
        let receipt = m.needReceipt ? S.uint(F.ReceiptInfo.messageUID, m.uid) + S.bool(F.ReceiptInfo.requested, true) : 0
        var size = S.uint(F.ChannelMessage.uid, m.uid) + S.uint(F.ChannelMessage.serverID, m.serverID)
            + S.uint(F.ChannelMessage.channelID, m.channelID) + S.uint(F.ChannelMessage.seq, m.seq)
            + S.nonEmpty(F.ChannelMessage.senderID, m.senderID.utf8.count) + S.uint(F.ChannelMessage.sentTime, m.sentTime)
            + S.lengthDelimited(F.ChannelMessage.body, body)
        for mention in m.mentions { size += S.lengthDelimited(F.ChannelMessage.mentions, mention.utf8.count) }
        size += S.bool(F.ChannelMessage.mentionAll, m.mentionAll) + S.bool(F.ChannelMessage.needReceipt, m.needReceipt)
            + S.nonEmpty(F.ChannelMessage.clientID, m.clientID.utf8.count)
            + (m.needReceipt ? S.lengthDelimited(F.ChannelMessage.receipt, receipt) : 0)
        out.rewrite(size: size) { w in
            w.uint(F.ChannelMessage.uid, m.uid)
            w.uint(F.ChannelMessage.serverID, m.serverID)
            w.uint(F.ChannelMessage.channelID, m.channelID)
            w.uint(F.ChannelMessage.seq, m.seq)
            w.string(F.ChannelMessage.senderID, m.senderID)
            w.uint(F.ChannelMessage.sentTime, m.sentTime)
            w.header(F.ChannelMessage.body, length: body)
            switch m.body {
            case .text(let t):
                var t = t
                t.withUTF8 { w.lengthDelimited(F.MessageBody.text, UnsafeRawBufferPointer($0)) }
            case .custom(let type, let data):
                w.header(F.MessageBody.custom, length: custom)
                w.string(F.CustomBody.type, type)
                w.bytesField(F.CustomBody.data, data)
            }
            for mention in m.mentions {
                var mention = mention
                mention.withUTF8 { w.lengthDelimited(F.ChannelMessage.mentions, UnsafeRawBufferPointer($0)) }
            }
            w.bool(F.ChannelMessage.mentionAll, m.mentionAll)
            w.bool(F.ChannelMessage.needReceipt, m.needReceipt)
            w.string(F.ChannelMessage.clientID, m.clientID)
            if m.needReceipt {
                w.header(F.ChannelMessage.receipt, length: receipt)
                w.uint(F.ReceiptInfo.messageUID, m.uid)
                w.bool(F.ReceiptInfo.requested, true)
            }
        }
    }

    /// Frame{response{id, message}}, without framing.
    public static func answer(id: UInt64, message: [UInt8]) -> [UInt8] {
        .written(size: answerSize(id: id, messageBytes: message.count)) { writeAnswer(id: id, message: message, into: &$0) }
    }

    /// The bytes `answer` takes.
    public static func answerSize(id: UInt64, messageBytes: Int) -> Int {
        ProtoSize.lengthDelimited(F.Frame.response, responseSize(id: id, messageBytes: messageBytes))
    }

    /// Writes what `answer` returns, `answerSize` bytes, where the cursor is
    /// (a connection's write buffer: the send's answer needs no array of its own).
    public static func writeAnswer(id: UInt64, message: [UInt8], into w: inout ProtoCursor) {
        w.header(F.Frame.response, length: responseSize(id: id, messageBytes: message.count))
        w.uint(F.Response.id, id)
        message.withUnsafeBytes { w.lengthDelimited(F.Response.message, $0) }
    }

    private static func responseSize(id: UInt64, messageBytes: Int) -> Int {
        ProtoSize.uint(F.Response.id, id) + ProtoSize.lengthDelimited(F.Response.message, messageBytes)
    }

    /// The channel's numbers every recipient's unread info starts from.
    public struct UnreadHeader: Sendable {
        public var serverID: UInt64, channelID: UInt64, maxCount: UInt64, lastMessageTime: UInt64, lastSeq: UInt64
        public init(serverID: UInt64, channelID: UInt64, maxCount: UInt64, lastMessageTime: UInt64, lastSeq: UInt64) {
            self.serverID = serverID; self.channelID = channelID; self.maxCount = maxCount
            self.lastMessageTime = lastMessageTime; self.lastSeq = lastSeq
        }

        /// The header of a new message's event: it leaves out what the message
        /// itself says (its server and channel, and its sent time and seq while
        /// it is the channel's newest), which a reader takes from the message
        /// (`GHEvent.messageUnread`). A delivery of shape B's 100-byte message
        /// was 205 bytes with them and 176 without.
        public static func ofMessage(seq: UInt64, sentTime: UInt64, maxCount: UInt64, lastMessageTime: UInt64, lastSeq: UInt64) -> UnreadHeader {
            UnreadHeader(serverID: 0, channelID: 0, maxCount: maxCount,
                         lastMessageTime: lastMessageTime == sentTime ? 0 : lastMessageTime, lastSeq: lastSeq == seq ? 0 : lastSeq)
        }
    }

    /// Frame{event{unread{header}, message}}, without a length prefix: each
    /// recipient's seq and own unread numbers follow in a trailer (`FrameEncoding.eventTrailer`).
    /// `field`: the event body the bytes are (a message, or a message update).
    public static func event(message: [UInt8], unread u: UnreadHeader, field: Int = WireField.Event.message) -> [UInt8] {
        let e = SharedEvent(message: message, unread: u, field: field)
        return .written(size: e.size) { e.write(&$0) }
    }

    /// The same frame measured, to be written into memory of its own (a
    /// fan-out's shared bytes) without an array between.
    public struct SharedEvent {
        let message: [UInt8], u: UnreadHeader, field: Int, unread: Int, event: Int
        /// Its bytes.
        public let size: Int

        public init(message: [UInt8], unread u: UnreadHeader, field: Int = WireField.Event.message) {
            typealias S = ProtoSize
            self.message = message
            self.u = u
            self.field = field
            unread = S.uint(F.UnreadInfo.serverID, u.serverID) + S.uint(F.UnreadInfo.channelID, u.channelID)
                + S.uint(F.UnreadInfo.maxCount, u.maxCount) + S.uint(F.UnreadInfo.lastMsgTime, u.lastMessageTime)
                + S.uint(F.UnreadInfo.lastSeq, u.lastSeq)
            event = S.lengthDelimited(F.Event.unread, unread) + S.lengthDelimited(field, message.count)
            size = S.lengthDelimited(F.Frame.event, event)
        }

        /// Writes `size` bytes at `p`.
        public func write(into p: UnsafeMutableRawPointer) {
            var w = ProtoCursor(p.assumingMemoryBound(to: UInt8.self))
            write(&w)
        }

        func write(_ w: inout ProtoCursor) {
            w.header(F.Frame.event, length: event)
            w.header(F.Event.unread, length: unread)
            w.uint(F.UnreadInfo.serverID, u.serverID)
            w.uint(F.UnreadInfo.channelID, u.channelID)
            w.uint(F.UnreadInfo.maxCount, u.maxCount)
            w.uint(F.UnreadInfo.lastMsgTime, u.lastMessageTime)
            w.uint(F.UnreadInfo.lastSeq, u.lastSeq)
            message.withUnsafeBytes { w.lengthDelimited(field, $0) }
        }
    }

    /// Frame{event{message}}: a message event without unread info (guests have no read positions).
    public static func event(message: [UInt8], field: Int = WireField.Event.message) -> [UInt8] {
        var w = ProtoWriter(capacity: message.count + 8)
        w.message(F.Frame.event) { $0.embedded(field, message) }
        return w.bytes
    }

    // MARK: Reading a send

    /// The request id and send of a payload that is exactly
    /// Frame{request{id, send_message}}; nil for anything else or anything
    /// unusual (unknown or repeated fields), which the generated decoder then reads.
    /// The request id an encoded answer (a Frame holding a Response) answers; nil for any other frame.
    /// What an event payload (Frame{event{...}}) says of its channel message.
    public enum EventMessage: Equatable, Sendable {
        /// The message's server, channel and seq.
        case place(server: UInt64, channel: UInt64, seq: UInt64)
        /// Another kind of event.
        case notAMessage
        /// Malformed, or using what this reader leaves to the generated decoder (groups).
        case unreadable
    }

    /// The server, channel and seq of the channel message an event payload
    /// carries, as swift-protobuf would decode them (later fields win, a later
    /// body of another kind replaces the message, a field of the wrong wire
    /// type or an unknown number is kept aside), at a fraction of the cost: it
    /// runs for every event a full replay buffer lets go. What it cannot read
    /// it says so, and the caller asks the generated decoder. It does not
    /// check the UTF-8 of strings it skips, which the generated decoder would
    /// refuse: payloads are the server's own encoder's.
    public static func messagePlace(_ payload: UnsafeRawBufferPointer) -> EventMessage {
        var frame = ProtoReader(payload)
        var isMessage = false
        var server: UInt64 = 0, channel: UInt64 = 0, seq: UInt64 = 0
        while !frame.isAtEnd {
            guard let f = frame.field() else { return .unreadable }
            guard f.number == F.Frame.event, f.type == .lengthDelimited else {
                // Another kind of frame replaces the event; a field of the wrong
                // wire type, or one this version does not know, is kept aside as unknown.
                if f.type == .lengthDelimited, f.number == F.Frame.request || f.number == F.Frame.response { isMessage = false }
                guard frame.skip(f.type) else { return .unreadable }
                continue
            }
            guard var event = frame.nested() else { return .unreadable }
            while !event.isAtEnd {
                guard let e = event.field() else { return .unreadable }
                guard e.number == F.Event.message, e.type == .lengthDelimited else {
                    // Another body replaces the message (as above, only as a message of a known kind).
                    if e.type == .lengthDelimited, F.Event.bodies.contains(e.number) { isMessage = false }
                    guard event.skip(e.type) else { return .unreadable }
                    continue
                }
                guard var message = event.nested() else { return .unreadable }
                if !isMessage { server = 0; channel = 0; seq = 0 }
                isMessage = true
                while !message.isAtEnd {
                    guard let m = message.field() else { return .unreadable }
                    switch (m.number, m.type) {
                    case (F.ChannelMessage.serverID, .varint): guard let v = message.varint() else { return .unreadable }; server = v
                    case (F.ChannelMessage.channelID, .varint): guard let v = message.varint() else { return .unreadable }; channel = v
                    case (F.ChannelMessage.seq, .varint): guard let v = message.varint() else { return .unreadable }; seq = v
                    default: guard message.skip(m.type) else { return .unreadable }
                    }
                }
            }
        }
        return isMessage ? .place(server: server, channel: channel, seq: seq) : .notAMessage
    }

    public static func responseID(_ payload: [UInt8]) -> UInt64? {
        payload.withUnsafeBytes { buffer in
            var frame = ProtoReader(buffer)
            guard let f = frame.field(), f.number == F.Frame.response, f.type == .lengthDelimited, var response = frame.nested(),
                  let g = response.field(), g.number == F.Response.id, g.type == .varint else { return nil }
            return response.varint()
        }
    }

    public static func readSend(_ payload: [UInt8]) -> (id: UInt64, send: PlainSend)? {
        payload.withUnsafeBytes { buffer in
            var frame = ProtoReader(buffer)
            guard let f = frame.field(), f.number == F.Frame.request, f.type == .lengthDelimited,
                  var request = frame.nested(), frame.isAtEnd else { return nil }
            var id: UInt64 = 0
            var send: PlainSend?
            var seenID = false
            while !request.isAtEnd {
                guard let f = request.field() else { return nil }
                switch (f.number, f.type) {
                case (F.Request.id, .varint) where !seenID:
                    guard let v = request.varint() else { return nil }
                    id = v
                    seenID = true
                case (F.Request.sendMessage, .lengthDelimited) where send == nil:
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

    /// The request id and event seq of a payload that is exactly
    /// Frame{request{id, ack{event_seq}}} (no `received`); nil for anything
    /// else or unusual, which the generated decoder then reads. A subscriber
    /// acknowledges every few hundred events, and through the generated
    /// decoder and encoder the acknowledgement and its answer were about 6%
    /// of the loop at a thousand subscribers (shape A).
    public static func readAck(_ payload: [UInt8]) -> (id: UInt64, eventSeq: UInt64)? {
        payload.withUnsafeBytes { buffer in
            var frame = ProtoReader(buffer)
            guard let f = frame.field(), f.number == F.Frame.request, f.type == .lengthDelimited,
                  var request = frame.nested(), frame.isAtEnd else { return nil }
            var id: UInt64?, seq: UInt64?
            while !request.isAtEnd {
                guard let f = request.field() else { return nil }
                switch (f.number, f.type) {
                case (F.Request.id, .varint) where id == nil:
                    guard let v = request.varint() else { return nil }
                    id = v
                case (F.Request.ack, .lengthDelimited) where seq == nil:
                    guard var ack = request.nested() else { return nil }
                    var value: UInt64 = 0, seen = false
                    while !ack.isAtEnd {
                        guard let g = ack.field(), g.number == F.Ack.eventSeq, g.type == .varint, !seen,
                              let v = ack.varint() else { return nil }
                        value = v
                        seen = true
                    }
                    seq = value
                default:
                    return nil
                }
            }
            guard let seq else { return nil }
            return (id ?? 0, seq)
        }
    }

    /// Frame{response{id, ok{}}}, without framing: the answer to an acknowledgement.
    public static func okAnswer(id: UInt64) -> [UInt8] {
        typealias S = ProtoSize
        let response = S.uint(F.Response.id, id) + S.lengthDelimited(F.Response.ok, 0)
        return .written(size: S.lengthDelimited(F.Frame.response, response)) { w in
            w.header(F.Frame.response, length: response)
            w.uint(F.Response.id, id)
            w.header(F.Response.ok, length: 0)
        }
    }

    private static func readSend(_ r: inout ProtoReader) -> PlainSend? {
        var s = PlainSend()
        var seen: UInt8 = 0
        func first(_ bit: UInt8) -> Bool {
            defer { seen |= bit }
            return seen & bit == 0
        }
        while !r.isAtEnd {
            guard let f = r.field() else { return nil }
            switch (f.number, f.type) {
            case (F.SendMessage.channelID, .varint) where first(1):
                guard let v = r.varint() else { return nil }
                s.channelID = v
            case (F.SendMessage.body, .lengthDelimited) where first(2):
                guard var b = r.nested(), let body = readBody(&b) else { return nil }
                s.body = body
            case (F.SendMessage.mentions, .lengthDelimited):
                guard let m = r.string() else { return nil }
                s.mentions.append(m)
            case (F.SendMessage.mentionAll, .varint) where first(4):
                guard let v = r.varint() else { return nil }
                s.mentionAll = v != 0
            case (F.SendMessage.needReceipt, .varint) where first(8):
                guard let v = r.varint() else { return nil }
                s.needReceipt = v != 0
            case (F.SendMessage.clientID, .lengthDelimited) where first(16):
                guard let c = r.string() else { return nil }
                s.clientID = c
            default:
                return nil
            }
        }
        return s
    }

    /// The content of a MessageBody; nil when it is empty or unusual (the generated decoder decides).
    private static func readBody(_ r: inout ProtoReader) -> WireBody? {
        guard let f = r.field() else { return nil }
        var body: WireBody
        switch (f.number, f.type) {
        case (F.MessageBody.text, .lengthDelimited):
            guard let t = r.string() else { return nil }
            body = .text(t)
        case (F.MessageBody.custom, .lengthDelimited):
            guard var c = r.nested() else { return nil }
            var type = "", data: [UInt8] = []
            var seen: UInt8 = 0
            while !c.isAtEnd {
                guard let f = c.field() else { return nil }
                switch (f.number, f.type) {
                case (F.CustomBody.type, .lengthDelimited) where seen & 1 == 0:
                    guard let t = c.string() else { return nil }
                    type = t
                    seen |= 1
                case (F.CustomBody.data, .lengthDelimited) where seen & 2 == 0:
                    guard let d = c.bytes() else { return nil }
                    data = d
                    seen |= 2
                default:
                    return nil
                }
            }
            body = .custom(type: type, data: data)
        default:
            return nil
        }
        return r.isAtEnd ? body : nil
    }
}
