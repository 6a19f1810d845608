// Protobuf's wire format by hand, for the few frames on the hot path (a send
// and its answer and event), where the generated code's generic visitors,
// storage classes and metadata look-ups cost a third of the loop's time
// (perf, `bench store`). Everything else keeps the generated code.
//
// The writer emits what SwiftProtobuf emits for the same values (fields in
// number order, proto3 defaults left out), so tests can compare bytes. The
// reader is strict on purpose: anything it does not expect (an unknown
// field, a repeated scalar, a wrong wire type) makes it give up, and the
// caller falls back to the generated decoder, which decides.

/// Both writers' string and bytes fields, from their length-delimited field.
public protocol ProtoFieldWriting {
    mutating func lengthDelimited(_ field: Int, _ content: UnsafeRawBufferPointer)
}

extension ProtoFieldWriting {
    /// A string field (nothing when empty).
    @inline(__always)
    public mutating func string(_ field: Int, _ value: String) {
        guard !value.isEmpty else { return }
        var s = value
        s.withUTF8 { lengthDelimited(field, UnsafeRawBufferPointer($0)) }
    }

    /// A bytes field (nothing when empty).
    @inline(__always)
    public mutating func bytesField(_ field: Int, _ value: [UInt8]) {
        guard !value.isEmpty else { return }
        value.withUnsafeBytes { lengthDelimited(field, $0) }
    }
}

public struct ProtoWriter: ProtoFieldWriting {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    /// Room for the frame's 4-byte length prefix; `framed` fills it in.
    public static func frame(capacity: Int) -> ProtoWriter {
        var w = ProtoWriter(capacity: capacity + 4)
        w.bytes.append(contentsOf: [0, 0, 0, 0])
        return w
    }

    /// The bytes of a writer made by `frame(capacity:)`, with the prefix filled in.
    public consuming func framed() -> [UInt8] {
        let n = UInt32(bytes.count - 4)
        bytes[0] = UInt8(truncatingIfNeeded: n >> 24)
        bytes[1] = UInt8(truncatingIfNeeded: n >> 16)
        bytes[2] = UInt8(truncatingIfNeeded: n >> 8)
        bytes[3] = UInt8(truncatingIfNeeded: n)
        return bytes
    }

    @inline(__always)
    mutating func tag(_ field: Int, _ wireType: UInt64) { varint(UInt64(field) << 3 | wireType) }

    @inline(__always)
    public mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 { bytes.append(UInt8(truncatingIfNeeded: v) | 0x80); v >>= 7 }
        bytes.append(UInt8(v))
    }

    /// A uint64/uint32/enum field; 0 is the default and is left out.
    public mutating func uint(_ field: Int, _ value: UInt64) {
        guard value != 0 else { return }
        tag(field, 0)
        varint(value)
    }

    public mutating func bool(_ field: Int, _ value: Bool) {
        guard value else { return }
        tag(field, 0)
        bytes.append(1)
    }

    /// A field whose content is already encoded (an embedded message), written even when empty.
    public mutating func lengthDelimited(_ field: Int, _ content: UnsafeRawBufferPointer) {
        tag(field, 2)
        varint(UInt64(content.count))
        bytes.append(contentsOf: content)
    }

    public mutating func embedded(_ field: Int, _ content: [UInt8]) {
        content.withUnsafeBytes { lengthDelimited(field, $0) }
    }

    /// An embedded message written in place: its length is patched in once
    /// `body` has written it (moving the content when the length needs more than one byte).
    public mutating func message(_ field: Int, _ body: (inout ProtoWriter) -> Void) {
        tag(field, 2)
        let lengthAt = bytes.count
        bytes.append(0)
        body(&self)
        let length = bytes.count - lengthAt - 1
        if length < 0x80 {
            bytes[lengthAt] = UInt8(length)
            return
        }
        // The content moves up by the prefix's extra bytes in place (no second buffer: this ran for every message of 128 bytes or more).
        var extra = 0
        var rest = UInt64(length) >> 7
        while rest != 0 { extra += 1; rest >>= 7 }
        bytes.append(contentsOf: repeatElement(0, count: extra))
        bytes.withUnsafeMutableBytes { p in
            let content = p.baseAddress! + lengthAt + 1
            (content + extra).copyMemory(from: content, byteCount: length)  // a memmove: the regions overlap
            var v = UInt64(length), at = lengthAt
            while v >= 0x80 {
                p[at] = UInt8(truncatingIfNeeded: v) | 0x80
                v >>= 7
                at += 1
            }
            p[at] = UInt8(v)
        }
    }
}

/// Reads the fields of one encoded message in order.
public struct ProtoReader {
    public enum WireType: UInt8 { case varint = 0, fixed64 = 1, lengthDelimited = 2, fixed32 = 5 }

    let buffer: UnsafeRawBufferPointer
    var at: Int
    let end: Int

    public init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer; at = 0; end = buffer.count }

    init(_ buffer: UnsafeRawBufferPointer, range: Range<Int>) { self.buffer = buffer; at = range.lowerBound; end = range.upperBound }

    public var isAtEnd: Bool { at >= end }

    /// The next field's number and wire type; nil at the end or on a malformed or unsupported tag.
    /// A field's key: a tag is a 32-bit varint, at most 5 bytes, as swift-protobuf reads it (longer is malformed).
    public mutating func field() -> (number: Int, type: WireType)? {
        let start = at
        guard at < end, let key = varint(), at - start <= 5, let type = WireType(rawValue: UInt8(key & 7)), key >> 3 > 0, key >> 3 <= 0x1FFF_FFFF
        else { return nil }
        return (Int(key >> 3), type)
    }

    public mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while at < end && shift < 64 {
            let b = buffer[at]
            at += 1
            value |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return value }
            shift += 7
        }
        return nil
    }

    /// The content of a length-delimited field, as a reader of its own.
    public mutating func nested() -> ProtoReader? {
        guard let range = lengthDelimited() else { return nil }
        return ProtoReader(buffer, range: range)
    }

    public mutating func lengthDelimited() -> Range<Int>? {
        guard let n = varint(), n <= UInt64(end - at) else { return nil }
        let start = at
        at += Int(n)
        return start..<at
    }

    /// A string field; nil when it is not valid UTF-8 (the generated decoder rejects those too).
    public mutating func string() -> String? {
        guard let range = lengthDelimited() else { return nil }
        let raw = UnsafeRawBufferPointer(rebasing: buffer[range])
        // ASCII (ids, client ids, custom types: nearly every string a send carries) is valid
        // UTF-8 as it is, and `String(decoding:)` over typed bytes is specialized code;
        // `String(validating:)` went through the runtime's generic metadata (a profile of C:
        // a fifth of reading a send). Anything else is validated.
        let ascii = raw.withMemoryRebound(to: UInt8.self) { b in b.contains { $0 >= 0x80 } ? nil : String(decoding: b, as: UTF8.self) }
        return ascii ?? String(validating: raw, as: UTF8.self)
    }

    /// Skips the value of a field of `type`; false when it runs past the end.
    public mutating func skip(_ type: WireType) -> Bool {
        switch type {
        case .varint: return varint() != nil
        case .lengthDelimited: return lengthDelimited() != nil
        case .fixed64, .fixed32:
            let n = type == .fixed64 ? 8 : 4
            guard end - at >= n else { return false }
            at += n
            return true
        }
    }

    public mutating func bytes() -> [UInt8]? {
        guard let range = lengthDelimited() else { return nil }
        return Array(buffer[range])
    }
}
