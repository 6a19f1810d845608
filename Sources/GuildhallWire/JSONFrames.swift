// Frames in proto3's JSON mapping, for `guildhall.json` WebSocket sessions
// (browsers), made by swift-protobuf's JSON encoder. A fanned-out event keeps
// "encode once" (docs/architecture.md): its shared payload is rendered once as the
// event's fields without braces (`SharedEvent.body`), and each recipient's
// own part (seq, its unread numbers, inbox cursor), which binary sessions get
// as a protobuf trailer, is written around it:
//   {"event":{"seq":"7","unread":{"unreadCount":"3",<shared unread>},<body>}}
// JSON has no merge of repeated keys, so what the trailer would merge into
// the shared event (its unread info, a cursor) is taken out of the shared
// rendering and written once, merged, per recipient. The numbers follow the
// mapping: 64-bit integers are strings, zero fields are left out.
// Pure; `JSONFramesTests` checks each result parses back to what the protobuf
// payload plus trailer decodes to.

import SwiftProtobuf

public enum JSONFrames {
    /// A frame as one JSON text.
    public static func text(_ frame: GHFrame) -> [UInt8] {
        // Encoding a message built in memory does not fail (no Any fields).
        (try? frame.jsonUTF8Bytes()) ?? Array("{}".utf8)
    }

    /// A protobuf `Frame` payload as one JSON text ("{}" for bytes that are not a frame).
    public static func text(payload: [UInt8]) -> [UInt8] { text((try? GHFrame(serializedBytes: payload)) ?? GHFrame()) }

    /// An event payload every recipient shares (Frame{event{...}} without
    /// seq), rendered for JSON once.
    public struct SharedEvent: Sendable {
        /// The event's fields but seq, cursor and unread, without braces ("" if none).
        public let body: [UInt8]
        /// Whether the shared event has unread info of its own (else only a
        /// recipient's trailer gives it some).
        let sharesUnread: Bool
        /// The unread info's fields without braces and without the recipient's
        /// own numbers, with what a message event leaves to its message filled in
        /// (`GHEvent.messageUnread`), for wherever the event has unread info.
        let unreadBody: [UInt8]
        /// The shared unread numbers a recipient's own replace when not zero
        /// (as protobuf's merge does), and the shared cursor.
        let unread: FrameEncoding.RecipientUnread
        let cursor: UInt64

        public init(payload: UnsafeRawBufferPointer) {
            var event = (try? GHFrame(serializedBytes: [UInt8](payload)))?.event ?? GHEvent()
            cursor = event.cursor
            unread = FrameEncoding.RecipientUnread(unreadCount: event.unread.unreadCount, mentionedCount: event.unread.mentionedCount,
                                                   ackTimestamp: event.unread.ackTimestamp, readSeq: event.unread.readSeq)
            sharesUnread = event.hasUnread
            event.unread.unreadCount = 0; event.unread.mentionedCount = 0; event.unread.ackTimestamp = 0; event.unread.readSeq = 0
            unreadBody = event.messageUnread.map { Self.fields(of: $0) } ?? []
            event.clearUnread()
            event.seq = 0
            event.cursor = 0
            body = Self.fields(of: event)
        }

        /// A message's JSON without its outer braces.
        private static func fields(of m: some SwiftProtobuf.Message) -> [UInt8] {
            let whole = (try? m.jsonUTF8Bytes()) ?? Array("{}".utf8)
            return Array(whole.dropFirst().dropLast())
        }

        /// The most bytes `head` writes for this event.
        public var maxHeadBytes: Int { 256 + unreadBody.count }
    }

    /// Writes one recipient's start of the event's text at `p` (at least
    /// `shared.maxHeadBytes` long), ending with the comma before the shared
    /// body when there is one; returns its length. The body, then `tail`, follow.
    public static func head(_ shared: SharedEvent, seq: UInt64, unread: FrameEncoding.RecipientUnread?, cursor: UInt64,
                            into p: UnsafeMutableRawPointer) -> Int {
        var w = Writer(p.assumingMemoryBound(to: UInt8.self))
        w.put("{\"event\":{\"seq\":")
        w.number(seq)
        if shared.sharesUnread || unread != nil {
            let own = unread
            w.put(",\"unread\":{")
            var first = true
            func field(_ name: StaticString, _ mine: UInt64?, _ theirs: UInt64) {
                let v = (mine ?? 0) != 0 ? mine! : theirs
                guard v != 0 else { return }
                if !first { w.put(",") }
                first = false
                w.put(name)
                w.number(v)
            }
            field("\"unreadCount\":", own?.unreadCount, shared.unread.unreadCount)
            field("\"mentionedCount\":", own?.mentionedCount, shared.unread.mentionedCount)
            field("\"ackTimestamp\":", own?.ackTimestamp, shared.unread.ackTimestamp)
            field("\"readSeq\":", own?.readSeq, shared.unread.readSeq)
            if !shared.unreadBody.isEmpty {
                if !first { w.put(",") }
                w.put(shared.unreadBody)
            }
            w.put("}")
        }
        let c = cursor != 0 ? cursor : shared.cursor
        if c != 0 {
            w.put(",\"cursor\":")
            w.number(c)
        }
        if !shared.body.isEmpty { w.put(",") }
        return w.count
    }

    /// What closes an event's text after its body: "}}", as one 2-byte store
    /// (a literal: no lazy global on the per-recipient path).
    public static let closingBraces: UInt16 = 0x7D7D
    public static var tail: [UInt8] { [0x7D, 0x7D] }

    /// Bytes written one after another; the caller sized the memory.
    private struct Writer {
        let start: UnsafeMutablePointer<UInt8>
        var q: UnsafeMutablePointer<UInt8>
        init(_ p: UnsafeMutablePointer<UInt8>) { start = p; q = p }
        var count: Int { q - start }

        mutating func put(_ s: StaticString) {
            q.update(from: s.utf8Start, count: s.utf8CodeUnitCount)
            q += s.utf8CodeUnitCount
        }

        mutating func put(_ bytes: [UInt8]) {
            guard !bytes.isEmpty else { return }
            bytes.withUnsafeBufferPointer { q.update(from: $0.baseAddress!, count: $0.count) }
            q += bytes.count
        }

        /// A 64-bit integer as proto3 JSON writes it: a quoted decimal.
        mutating func number(_ value: UInt64) {
            var digits: (UInt64, Int) = (value, 1)
            while digits.0 >= 10 { digits.0 /= 10; digits.1 += 1 }
            q.pointee = UInt8(ascii: "\"")
            var v = value, i = digits.1
            while i > 0 {
                q[i] = UInt8(truncatingIfNeeded: v % 10) + UInt8(ascii: "0")
                v /= 10
                i -= 1
            }
            q[digits.1 + 1] = UInt8(ascii: "\"")
            q += digits.1 + 2
        }
    }
}
