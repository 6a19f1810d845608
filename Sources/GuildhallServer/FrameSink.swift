// How a session's frames reach its peer: the transport's framing around each
// protobuf `Frame` payload (DESIGN §3, §9). The session hands the sink
// payloads and never frames bytes itself; TCP frames with a 4-byte
// big-endian length today, and a WebSocket transport adds its own framing
// here. Writes only into the connection's queue; loop thread only.

import GuildhallLoop
import GuildhallWire

struct FrameSink {
    enum Framing {
        /// A 4-byte big-endian length, then the payload (guildhall's TCP protocol).
        case lengthPrefixed
    }

    var framing = Framing.lengthPrefixed

    /// Bytes of framing before a payload.
    private var headerBytes: Int { 4 }

    /// Shared payloads up to this size are copied next to their framing and
    /// trailer instead of queued by reference: a flush then writes one
    /// contiguous run instead of three pieces per event, and the kernel walks one iovec.
    static let copyPayloadsUpTo = 1024

    /// Queues bytes already framed (a WebSocket control frame).
    func send(raw bytes: [UInt8], on c: TCPConnection) {
        bytes.withUnsafeBytes { raw in
            guard !raw.isEmpty, let p = c.reserveScratch(raw.count) else { return }
            p.copyMemory(from: raw.baseAddress!, byteCount: raw.count)
            c.commitScratch(raw.count, reserved: raw.count)
        }
    }

    /// Queues one frame.
    func send(_ frame: GHFrame, on c: TCPConnection) { send(FrameEncoding.payload(frame), on: c) }

    /// Queues one frame from its payload.
    func send(_ payload: [UInt8], on c: TCPConnection) {
        payload.withUnsafeBytes { raw in
            let n = raw.count
            guard let p = c.reserveScratch(headerBytes + n) else { return }
            writeHeader(n, at: p)
            if n > 0 { (p + headerBytes).copyMemory(from: raw.baseAddress!, byteCount: n) }
            c.commitScratch(headerBytes + n, reserved: headerBytes + n)
        }
    }

    /// Queues one event: the payload every recipient shares (Frame{event{body}})
    /// followed by this recipient's trailer (seq, own unread numbers, inbox
    /// cursor), which protobuf merges into the event.
    func sendEvent(_ payload: SharedBytes, seq: UInt64, unread: FrameEncoding.RecipientUnread?, cursor: UInt64, on c: TCPConnection) {
        let size = payload.count
        if size <= Self.copyPayloadsUpTo {
            // The trailer is written first, after the payload, and the
            // header then knows the whole length: one pass over the trailer.
            let reserved = headerBytes + size + FrameEncoding.maxTrailerBytes
            guard let p = c.reserveScratch(reserved) else { return }
            (p + headerBytes).copyMemory(from: payload.base, byteCount: size)
            let written = FrameEncoding.eventTrailer(seq: seq, unread: unread, cursor: cursor, into: p + headerBytes + size)
            writeHeader(size + written, at: p)
            c.commitScratch(headerBytes + size + written, reserved: reserved)
        } else {
            withUnsafeTemporaryAllocation(byteCount: FrameEncoding.maxTrailerBytes, alignment: 1) { trailer in
                let written = FrameEncoding.eventTrailer(seq: seq, unread: unread, cursor: cursor, into: trailer.baseAddress!)
                guard let header = c.reserveScratch(headerBytes) else { return }
                writeHeader(size + written, at: header)
                c.commitScratch(headerBytes, reserved: headerBytes)
                c.enqueue(shared: payload)
                guard let p = c.reserveScratch(written) else { return }
                p.copyMemory(from: trailer.baseAddress!, byteCount: written)
                c.commitScratch(written, reserved: written)
            }
        }
    }

    @inline(__always)
    private func writeHeader(_ payloadBytes: Int, at p: UnsafeMutableRawPointer) {
        switch framing {
        case .lengthPrefixed: p.storeBytes(of: UInt32(payloadBytes).bigEndian, as: UInt32.self)
        }
    }
}
