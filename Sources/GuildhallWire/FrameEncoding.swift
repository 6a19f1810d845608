// Turns frames into bytes for the wire, and the one trick that lets a
// fanned-out event be encoded once: the per-session event sequence goes in a
// small trailer that protobuf merges into the shared body.
//
// Protobuf defines that concatenated encodings of a message merge, and that
// an embedded message field seen twice merges too. So
//   bytes(Frame{event{body}}) ++ bytes(Frame{event{seq: N}})
// decodes as Frame{event{seq: N, body}} in every conforming implementation.

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
        return 1 + varintLength(UInt64(inner)) + inner
    }

    /// Writes Frame{event{seq, unread{unread_count, mentioned_count, ack_timestamp, read_seq}, cursor}}
    /// into `into` (at least `maxTrailerBytes` long); returns its length.
    /// One pass, each length computed once: it runs once per delivery per recipient.
    public static func eventTrailer(seq: UInt64, unread: RecipientUnread?, cursor: UInt64 = 0, into p: UnsafeMutableRawPointer) -> Int {
        typealias F = WireField
        let unreadLen = unread.map(unreadLength) ?? 0
        var inner = 1 + varintLength(seq)
        if unread != nil { inner += 1 + varintLength(UInt64(unreadLen)) + unreadLen }
        if cursor != 0 { inner += 1 + varintLength(cursor) }
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
        byte(tag(F.Frame.event, lengthDelimited: true))
        varint(UInt64(inner))
        byte(tag(F.Event.seq))
        varint(seq)
        if let u = unread {
            byte(tag(F.Event.unread, lengthDelimited: true))
            varint(UInt64(unreadLen))
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
