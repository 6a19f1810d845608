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

    /// Largest trailer `eventSeqTrailer` writes.
    public static let maxTrailerBytes = 13

    /// Bytes `eventSeqTrailer` writes for `seq`.
    public static func eventSeqTrailerLength(_ seq: UInt64) -> Int {
        var n = 1
        var v = seq >> 7
        while v != 0 { n += 1; v >>= 7 }
        return 3 + n
    }

    /// Writes the encoding of Frame{event{seq}} into `into` (at least
    /// `maxTrailerBytes` long) and returns its length.
    /// Frame.event is field 3 (length-delimited, tag 0x1A); Event.seq is field 1 (varint, tag 0x08).
    public static func eventSeqTrailer(_ seq: UInt64, into: UnsafeMutableRawPointer) -> Int {
        var n = 0
        var v = seq
        repeat {
            var byte = UInt8(v & 0x7F)
            v >>= 7
            if v != 0 { byte |= 0x80 }
            into.storeBytes(of: byte, toByteOffset: 3 + n, as: UInt8.self)
            n += 1
        } while v != 0
        into.storeBytes(of: 0x1A, toByteOffset: 0, as: UInt8.self)
        into.storeBytes(of: UInt8(1 + n), toByteOffset: 1, as: UInt8.self)
        into.storeBytes(of: 0x08, toByteOffset: 2, as: UInt8.self)
        return 3 + n
    }
}
