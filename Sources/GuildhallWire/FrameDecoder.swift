// Splits a TCP byte stream into frame payloads: a 4-byte big-endian length,
// then that many bytes. Sans-I/O and incremental: feed any split of the
// stream, take whole payloads out. The size limit is enforced from the
// prefix alone, before a byte of an oversized body is buffered.

/// Why the stream can no longer be trusted.
public enum FrameDecodeError: Error, Equatable, Sendable {
    /// The length prefix announced `announced` bytes; the limit is `limit`.
    case frameTooLarge(announced: Int, limit: Int)
}

public struct FrameDecoder: Sendable {
    /// Largest payload accepted; may change (for example after login).
    public var maxFrameBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var failed: FrameDecodeError?

    public init(maxFrameBytes: Int) { self.maxFrameBytes = maxFrameBytes }

    /// Bytes held for a frame not yet complete.
    public var bufferedBytes: Int { buffer.count - start }
    /// Bytes of storage the buffer keeps.
    public var storage: Int { buffer.capacity }

    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        buffer.append(contentsOf: bytes)
    }

    public mutating func feed(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
    }

    /// Gives back the buffer's storage when it holds no bytes: for a
    /// connection gone quiet, whose last frames' room would otherwise stay.
    public mutating func giveBackRoom() {
        if start == buffer.count && buffer.capacity > 0 {
            buffer = []
            start = 0
        }
    }

    /// The next complete payload, nil when more bytes are needed. After an
    /// error every call throws it again: the stream is out of step.
    public mutating func next() throws(FrameDecodeError) -> [UInt8]? {
        if let failed { throw failed }
        let available = buffer.count - start
        guard available >= 4 else { compact(); return nil }
        let length = Int(buffer[start]) << 24 | Int(buffer[start + 1]) << 16 | Int(buffer[start + 2]) << 8 | Int(buffer[start + 3])
        guard length <= maxFrameBytes else {
            let error = FrameDecodeError.frameTooLarge(announced: length, limit: maxFrameBytes)
            failed = error
            buffer = []
            start = 0
            throw error
        }
        guard available >= 4 + length else { compact(); return nil }
        let payload = Array(buffer[(start + 4)..<(start + 4 + length)])
        start += 4 + length
        if start == buffer.count { compact() }
        return payload
    }

    /// Drops consumed bytes; an idle connection keeps no large buffer around.
    private mutating func compact() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 4096)
            start = 0
        } else if start > 0 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
    }
}
