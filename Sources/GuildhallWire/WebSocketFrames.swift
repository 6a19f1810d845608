// The frames a WebSocket server writes (RFC 6455 §5.2), built here rather
// than by wslay (which copies each message into its own queue): a server's
// frames are unmasked, so the header is the only part that differs from the
// payload, and every recipient of an event shares the payload's bytes
// (docs/architecture.md: encode once, one write per session per loop turn). Inbound
// frames, which are masked and may be fragmented, are wslay's. Pure.

public enum WebSocketFrames {
    public enum Opcode: UInt8, Sendable {
        case text = 0x1, binary = 0x2, close = 0x8, ping = 0x9, pong = 0xA
    }

    /// The most header bytes a frame needs (2, plus 8 for a 64-bit length).
    public static let maxHeaderBytes = 10

    /// Header bytes for a payload of `length` bytes.
    @inline(__always)
    public static func headerBytes(length: Int) -> Int { length <= 125 ? 2 : length <= 0xFFFF ? 4 : 10 }

    /// Writes a final, unmasked frame's header for `length` payload bytes at `p`; returns its size.
    @inline(__always)
    @discardableResult
    public static func writeHeader(_ opcode: Opcode, length: Int, at p: UnsafeMutableRawPointer) -> Int {
        p.storeBytes(of: 0x80 | opcode.rawValue, as: UInt8.self)
        if length <= 125 {
            p.storeBytes(of: UInt8(length), toByteOffset: 1, as: UInt8.self)
            return 2
        }
        if length <= 0xFFFF {
            p.storeBytes(of: 126, toByteOffset: 1, as: UInt8.self)
            p.storeBytes(of: UInt16(length).bigEndian, toByteOffset: 2, as: UInt16.self)
            return 4
        }
        p.storeBytes(of: 127, toByteOffset: 1, as: UInt8.self)
        p.storeBytes(of: UInt64(length).bigEndian, toByteOffset: 2, as: UInt64.self)
        return 10
    }

    /// A whole frame (header and payload), for the occasional frame off the hot path.
    public static func frame(_ opcode: Opcode, _ payload: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: headerBytes(length: payload.count))
        out.withUnsafeMutableBytes { _ = writeHeader(opcode, length: payload.count, at: $0.baseAddress!) }
        return out + payload
    }

    /// A client's frame (masked, as RFC 6455 requires of clients; `fin` false
    /// for a fragment), for clients and for tests of the server's reading.
    public static func clientFrame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, masked: Bool = true,
                                   mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]) -> [UInt8] {
        var out: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        if payload.count <= 125 {
            out.append(maskBit | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            out += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            out.append(maskBit | 127)
            out += (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(payload.count) >> (8 * UInt64($0))) }
        }
        guard masked else { return out + payload }
        return out + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    /// A close frame: the status code (big-endian), then the reason as UTF-8,
    /// cut to the 123 bytes a control frame leaves (at a character's boundary).
    public static func close(code: UInt16, reason: String) -> [UInt8] {
        var text = Substring(reason)
        while text.utf8.count > 123 { text = text.dropLast() }
        return frame(.close, [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(text.utf8))
    }
}
