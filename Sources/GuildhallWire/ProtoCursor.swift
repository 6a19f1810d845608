// Protobuf written straight into memory of the exact size, for the frames of
// the send path (a message, its answer, its live event): the size is
// measured first (`ProtoSize`), the buffer made once, and the fields written
// without a capacity or uniqueness check per byte, where `ProtoWriter`
// appended byte by byte to an array (the encoding was about 6% of the guild
// home's loop on shape C). Emits what `ProtoWriter` and the generated code
// emit for the same values; MessageFramesTests compares the bytes. Pure.

/// Sizes on protobuf's wire, for what `ProtoCursor` will write.
public enum ProtoSize {
    @inline(__always)
    public static func varint(_ v: UInt64) -> Int { max(1, (64 - v.leadingZeroBitCount + 6) / 7) }

    @inline(__always)
    static func tag(_ field: Int) -> Int { varint(UInt64(field) << 3) }

    /// A uint field (nothing for 0, the default).
    @inline(__always)
    public static func uint(_ field: Int, _ v: UInt64) -> Int { v == 0 ? 0 : tag(field) + varint(v) }

    /// A bool field (nothing for false).
    @inline(__always)
    public static func bool(_ field: Int, _ v: Bool) -> Int { v ? tag(field) + 1 : 0 }

    /// A length-delimited field of `n` bytes, written even when empty (an embedded message, a oneof member).
    @inline(__always)
    public static func lengthDelimited(_ field: Int, _ n: Int) -> Int { tag(field) + varint(UInt64(n)) + n }

    /// A string or bytes field of `n` bytes (nothing when empty).
    @inline(__always)
    public static func nonEmpty(_ field: Int, _ n: Int) -> Int { n == 0 ? 0 : lengthDelimited(field, n) }
}

/// Writes fields at a pointer into memory `ProtoSize` measured: no bounds checks.
public struct ProtoCursor {
    public private(set) var at: UnsafeMutablePointer<UInt8>

    public init(_ start: UnsafeMutablePointer<UInt8>) { at = start }

    @inline(__always)
    public mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            at.pointee = UInt8(truncatingIfNeeded: v) | 0x80
            at += 1
            v >>= 7
        }
        at.pointee = UInt8(v)
        at += 1
    }

    @inline(__always)
    mutating func tag(_ field: Int, _ wireType: UInt64) { varint(UInt64(field) << 3 | wireType) }

    @inline(__always)
    public mutating func uint(_ field: Int, _ value: UInt64) {
        guard value != 0 else { return }
        tag(field, 0)
        varint(value)
    }

    @inline(__always)
    public mutating func bool(_ field: Int, _ value: Bool) {
        guard value else { return }
        tag(field, 0)
        varint(1)
    }

    /// A length-delimited field's tag and length; `length` bytes of content follow.
    @inline(__always)
    public mutating func header(_ field: Int, length: Int) {
        tag(field, 2)
        varint(UInt64(length))
    }

    @inline(__always)
    public mutating func raw(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        UnsafeMutableRawPointer(at).copyMemory(from: base, byteCount: bytes.count)
        at += bytes.count
    }

    /// A length-delimited field, written even when empty.
    public mutating func lengthDelimited(_ field: Int, _ content: UnsafeRawBufferPointer) {
        header(field, length: content.count)
        raw(content)
    }

}

extension ProtoCursor: ProtoFieldWriting {}

extension Array where Element == UInt8 {
    /// `size` bytes written by `write` through a cursor, which must fill them exactly.
    @inline(__always)
    static func written(size: Int, _ write: (inout ProtoCursor) -> Void) -> [UInt8] {
        guard size > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            var cursor = ProtoCursor(buffer.baseAddress!)
            write(&cursor)
            precondition(cursor.at == buffer.baseAddress! + size, "an encoder wrote other than it measured")
            count = size
        }
    }

    /// `self` replaced by `size` bytes written by `write`, in its own storage
    /// when that is unshared and large enough: a caller that encodes one
    /// message after another into the same array allocates nothing per message.
    @inline(__always)
    mutating func rewrite(size: Int, _ write: (inout ProtoCursor) -> Void) {
        removeAll(keepingCapacity: true)
        append(contentsOf: repeatElement(0, count: size))
        guard size > 0 else { return }
        withUnsafeMutableBufferPointer { buffer in
            var cursor = ProtoCursor(buffer.baseAddress!)
            write(&cursor)
            precondition(cursor.at == buffer.baseAddress! + size, "an encoder wrote other than it measured")
        }
    }
}
