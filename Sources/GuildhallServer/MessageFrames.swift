// The bytes of a committed channel message, encoded once by hand and used
// twice: in the sender's answer and in the live event every recipient
// shares. Same bytes as the generated encoder gives for
// `GHChannelMessage(record)` (a test compares them); the generated encoder
// cost a fifth of the loop's time per send (perf, `bench store`). Pure.

import GuildhallCore
import GuildhallWire

enum MessageFrames {
    /// ChannelMessage{...} of `r` as answers and live events carry it (receipt: `requested` only).
    static func channelMessage(_ r: MessageRecord) -> [UInt8] {
        var w = ProtoWriter(capacity: 96 + r.content.size + r.sender.utf8.count + r.clientID.utf8.count)
        w.uint(1, r.uid)
        w.uint(2, r.serverID)
        w.uint(3, r.channelID)
        w.uint(4, r.seq)
        w.string(5, r.sender)
        w.uint(6, r.sentTime)
        w.message(7) { body in
            // Oneof members are written even when empty.
            switch r.content {
            case .text(let t):
                var t = t
                t.withUTF8 { body.lengthDelimited(1, UnsafeRawBufferPointer($0)) }
            case .custom(let type, let data):
                body.message(2) { custom in
                    custom.string(1, type)
                    custom.bytesField(2, data)
                }
            }
        }
        for m in r.mentions {
            var m = m
            m.withUTF8 { w.lengthDelimited(8, UnsafeRawBufferPointer($0)) }
        }
        w.bool(9, r.mentionAll)
        w.bool(10, r.needReceipt)
        w.string(11, r.clientID)
        if r.needReceipt {
            w.message(12) { receipt in
                receipt.uint(1, r.uid)
                receipt.bool(2, true)
            }
        }
        return w.bytes
    }

    /// Frame{response{id, message}} with its length prefix, ready to queue.
    static func answer(id: UInt64, message: [UInt8]) -> [UInt8] {
        var w = ProtoWriter.frame(capacity: message.count + 24)
        w.message(2) { response in
            response.uint(1, id)
            response.embedded(50, message)
        }
        return w.framed()
    }

    /// The channel's numbers every recipient's unread info starts from.
    struct UnreadHeader {
        var serverID: UInt64
        var channelID: UInt64
        var maxCount: UInt64
        var lastMessageTime: UInt64
        var lastSeq: UInt64
    }

    /// Frame{event{unread{header}, message}}, without a length prefix: each
    /// recipient's seq and own unread numbers follow in a trailer (`FrameEncoding.eventTrailer`).
    static func event(message: [UInt8], unread u: UnreadHeader) -> [UInt8] {
        var w = ProtoWriter(capacity: message.count + 48)
        w.message(3) { event in
            event.message(2) { unread in
                unread.uint(1, u.serverID)
                unread.uint(2, u.channelID)
                unread.uint(4, u.maxCount)
                unread.uint(7, u.lastMessageTime)
                unread.uint(8, u.lastSeq)
            }
            event.embedded(10, message)
        }
        return w.bytes
    }
}
