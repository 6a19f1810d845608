// Turns frames into bytes for the wire, and the one trick that lets a
// fanned-out event be encoded once: the per-session event sequence and
// unread numbers are the recipient's own fields, written after the shared ones.
//
// A shared event is encoded once as Frame{event{body}}: `1a <length> <fields>`.
// Each recipient's frame puts its own fields after the shared ones inside the
// same event, with the event's length made anew:
//   1a <length + own> <fields> <seq: N, unread: ...>
// decodes as Frame{event{body, seq: N, unread}}. The shared fields are copied
// (or referenced, when large) as they are; only the event's tag and length
// are written per recipient. Protobuf merges an embedded message field seen
// twice, so a recipient's `unread` merges with one the shared fields carry.
//
// An earlier form appended a second event part, bytes(Frame{event{seq: N}}),
// which protobuf merges the same way; every reader walked one more part per
// event (shape B's load generator spends most of its time walking fields).
// `eventTrailer` still writes that form for a payload that is not one event.

import SwiftProtobuf

public enum FrameEncoding {
    /// The payload of `frame`, without the length prefix.
    public static func payload(_ frame: GHFrame) -> [UInt8] {
        // Serialising a message built in memory only fails for unset required
        // fields, which proto3 does not have.
        (try? frame.serializedBytes()) ?? []
    }

    /// Length prefix plus payload, ready to write.
    public static func framed(_ frame: GHFrame) -> [UInt8] {
        let body = payload(frame)
        var out = [UInt8]()
        out.reserveCapacity(body.count + 4)
        appendLength(UInt32(body.count), to: &out)
        out.append(contentsOf: body)
        return out
    }

    public static func appendLength(_ n: UInt32, to out: inout [UInt8]) {
        out.append(UInt8(truncatingIfNeeded: n >> 24))
        out.append(UInt8(truncatingIfNeeded: n >> 16))
        out.append(UInt8(truncatingIfNeeded: n >> 8))
        out.append(UInt8(truncatingIfNeeded: n))
    }

    /// Largest trailer `eventTrailer` writes.
    public static let maxTrailerBytes = 80

    /// The recipient's own unread numbers, merged into a shared event's `unread`.
    public struct RecipientUnread: Sendable, Codable, Equatable {
        public var unreadCount: UInt64
        public var mentionedCount: UInt64
        public var ackTimestamp: UInt64
        public var readSeq: UInt64
        public init(unreadCount: UInt64, mentionedCount: UInt64, ackTimestamp: UInt64, readSeq: UInt64) {
            self.unreadCount = unreadCount; self.mentionedCount = mentionedCount
            self.ackTimestamp = ackTimestamp; self.readSeq = readSeq
        }
    }

    /// Bytes `eventTrailer` writes.
    public static func eventTrailerLength(seq: UInt64, unread: RecipientUnread?, cursor: UInt64 = 0) -> Int {
        let inner = innerLength(seq: seq, unread: unread, cursor: cursor)
        return eventHeaderLength(inner) + inner
    }

    /// Writes Frame{event{seq, unread{unread_count, mentioned_count, ack_timestamp, read_seq}, cursor}}
    /// into `into` (at least `maxTrailerBytes` long); returns its length: a
    /// second event part, for a payload that is not one event (see the header).
    public static func eventTrailer(seq: UInt64, unread: RecipientUnread?, cursor: UInt64 = 0, into p: UnsafeMutableRawPointer) -> Int {
        let inner = innerLength(seq: seq, unread: unread, cursor: cursor)
        let header = writeEventHeader(inner, into: p)
        return header + writeRecipientFields(seq: seq, unread: unread, cursor: cursor, into: p + header)
    }

    /// Where the event's own fields start in `base` when its `count` bytes
    /// are exactly Frame{event{...}} (every shared event), else nil.
    public static func sharedEventFields(_ base: UnsafeRawPointer, count: Int) -> Int? {
        let b = base.assumingMemoryBound(to: UInt8.self)
        guard count >= 2, b[0] == tag(WireField.Frame.event, lengthDelimited: true) else { return nil }
        var length = 0, shift = 0, i = 1
        while i < count && i <= 5 {
            let byte = b[i]
            length |= Int(byte & 0x7f) << shift
            i += 1
            if byte < 0x80 { return i + length == count ? i : nil }
            shift += 7
        }
        return nil
    }

    /// Bytes of a recipient's own event fields (`writeRecipientFields`).
    public static func recipientFieldsLength(seq: UInt64, unread: RecipientUnread?, cursor: UInt64) -> Int {
        innerLength(seq: seq, unread: unread, cursor: cursor)
    }

    /// Bytes of the event's tag and length before `eventLength` bytes of its fields.
    public static func eventHeaderLength(_ eventLength: Int) -> Int { 1 + varintLength(UInt64(eventLength)) }

    /// Writes the event's tag and length (Frame.event, `eventLength`); returns the bytes written.
    public static func writeEventHeader(_ eventLength: Int, into p: UnsafeMutableRawPointer) -> Int {
        let start = p.assumingMemoryBound(to: UInt8.self)
        var q = start
        q.pointee = tag(WireField.Frame.event, lengthDelimited: true)
        q += 1
        var v = UInt64(eventLength)
        while v >= 0x80 { q.pointee = UInt8(truncatingIfNeeded: v) | 0x80; q += 1; v >>= 7 }
        q.pointee = UInt8(v)
        return q + 1 - start
    }

    /// Writes a recipient's own event fields: seq, unread{unread_count,
    /// mentioned_count, ack_timestamp, read_seq}, cursor; returns their length.
    /// One pass, each length computed once: it runs once per delivery per recipient.
    public static func writeRecipientFields(seq: UInt64, unread: RecipientUnread?, cursor: UInt64, into p: UnsafeMutableRawPointer) -> Int {
        typealias F = WireField
        let start = p.assumingMemoryBound(to: UInt8.self)
        var q = start
        @inline(__always) func byte(_ b: UInt8) {
            q.pointee = b
            q += 1
        }
        @inline(__always) func varint(_ value: UInt64) {
            var v = value
            while v >= 0x80 { byte(UInt8(truncatingIfNeeded: v) | 0x80); v >>= 7 }
            byte(UInt8(v))
        }
        byte(tag(F.Event.seq))
        varint(seq)
        if let u = unread {
            byte(tag(F.Event.unread, lengthDelimited: true))
            varint(UInt64(unreadLength(u)))
            if u.unreadCount != 0 { byte(tag(F.UnreadInfo.unreadCount)); varint(u.unreadCount) }
            if u.mentionedCount != 0 { byte(tag(F.UnreadInfo.mentionedCount)); varint(u.mentionedCount) }
            if u.ackTimestamp != 0 { byte(tag(F.UnreadInfo.ackTimestamp)); varint(u.ackTimestamp) }
            if u.readSeq != 0 { byte(tag(F.UnreadInfo.readSeq)); varint(u.readSeq) }
        }
        if cursor != 0 { byte(tag(F.Event.cursor)); varint(cursor) }
        return q - start
    }

    /// A one-byte tag (fields 1-15): varint, or length-delimited.
    @inline(__always)
    private static func tag(_ field: Int, lengthDelimited: Bool = false) -> UInt8 { UInt8(field << 3 | (lengthDelimited ? 2 : 0)) }

    private static func innerLength(seq: UInt64, unread: RecipientUnread?, cursor: UInt64) -> Int {
        var n = 1 + varintLength(seq)
        if cursor != 0 { n += 1 + varintLength(cursor) }
        if let u = unread {
            let len = unreadLength(u)
            n += 1 + varintLength(UInt64(len)) + len
        }
        return n
    }

    @inline(__always)
    private static func unreadLength(_ u: RecipientUnread) -> Int {
        var n = 0
        if u.unreadCount != 0 { n += 1 + varintLength(u.unreadCount) }
        if u.mentionedCount != 0 { n += 1 + varintLength(u.mentionedCount) }
        if u.ackTimestamp != 0 { n += 1 + varintLength(u.ackTimestamp) }
        if u.readSeq != 0 { n += 1 + varintLength(u.readSeq) }
        return n
    }

    @inline(__always)
    static func varintLength(_ value: UInt64) -> Int {
        var n = 1
        var v = value >> 7
        while v != 0 { n += 1; v >>= 7 }
        return n
    }
}
