// How a session's frames reach its peer: the transport's framing around each
// protobuf `Frame` payload (docs/architecture.md). The session hands the sink
// payloads and never frames bytes itself: TCP frames with a 4-byte
// big-endian length; a WebSocket sends each frame as one message, binary
// protobuf (`guildhall.proto`) or JSON text (`guildhall.json`, JSONFrames).
// Writes only into the connection's queue; loop thread only.

import GuildhallLoop
import GuildhallWire

struct FrameSink {
    enum Framing {
        /// A 4-byte big-endian length, then the payload (guildhall's TCP protocol).
        case lengthPrefixed
        /// One unmasked binary WebSocket message per frame (`guildhall.proto`).
        case webSocket
        /// One unmasked text WebSocket message per frame, in proto3's JSON
        /// mapping (`guildhall.json`); the loop's renderings of shared events.
        case webSocketText(JSONEvents)
    }

    var framing = Framing.lengthPrefixed

    /// The framing for a connection read by `inbound`.
    init(for inbound: InboundFrames, json: @autoclosure () -> JSONEvents) {
        switch inbound.webSocketEncoding {
        case nil: framing = .lengthPrefixed
        case .proto: framing = .webSocket
        case .json: framing = .webSocketText(json())
        }
    }

    init(framing: Framing = .lengthPrefixed) { self.framing = framing }

    var isWebSocket: Bool {
        if case .lengthPrefixed = framing { return false }
        return true
    }

    /// Bytes of framing before a payload of `length` bytes.
    @inline(__always)
    private func headerBytes(_ length: Int) -> Int {
        switch framing {
        case .lengthPrefixed: 4
        case .webSocket, .webSocketText: WebSocketFrames.headerBytes(length: length)
        }
    }

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
    func send(_ frame: GHFrame, on c: TCPConnection) {
        if case .webSocketText = framing { return queue(JSONFrames.text(frame), on: c) }
        queue(FrameEncoding.payload(frame), on: c)
    }

    /// Queues one frame from its payload.
    func send(_ payload: [UInt8], on c: TCPConnection) {
        if case .webSocketText = framing { return queue(JSONFrames.text(payload: payload), on: c) }
        queue(payload, on: c)
    }

    /// Queues bytes in this framing.
    private func queue(_ payload: [UInt8], on c: TCPConnection) {
        payload.withUnsafeBytes { raw in
            let n = raw.count, h = headerBytes(n)
            guard let p = c.reserveScratch(h + n) else { return }
            writeHeader(n, at: p)
            if n > 0 { (p + h).copyMemory(from: raw.baseAddress!, byteCount: n) }
            c.commitScratch(h + n, reserved: h + n)
        }
    }

    /// Queues one event: the payload every recipient shares (Frame{event{body}})
    /// followed by this recipient's trailer (seq, own unread numbers, inbox
    /// cursor), which protobuf merges into the event.
    func sendEvent(_ payload: SharedBytes, seq: UInt64, unread: FrameEncoding.RecipientUnread?, cursor: UInt64, on c: TCPConnection) {
        let size = payload.count
        switch framing {
        case .lengthPrefixed: break
        case .webSocket: return sendWebSocketEvent(payload, seq: seq, unread: unread, cursor: cursor, on: c)
        case .webSocketText(let json): return json.rendering(payload).write(seq: seq, unread: unread, cursor: cursor, on: c)
        }
        if size <= Self.copyPayloadsUpTo {
            // The trailer is written first, after the payload, and the
            // header then knows the whole length: one pass over the trailer.
            let reserved = 4 + size + FrameEncoding.maxTrailerBytes
            guard let p = c.reserveScratch(reserved) else { return }
            (p + 4).copyMemory(from: payload.base, byteCount: size)
            let written = FrameEncoding.eventTrailer(seq: seq, unread: unread, cursor: cursor, into: p + 4 + size)
            writeHeader(size + written, at: p)
            c.commitScratch(4 + size + written, reserved: reserved)
        } else {
            withUnsafeTemporaryAllocation(byteCount: FrameEncoding.maxTrailerBytes, alignment: 1) { trailer in
                let written = FrameEncoding.eventTrailer(seq: seq, unread: unread, cursor: cursor, into: trailer.baseAddress!)
                guard let header = c.reserveScratch(4) else { return }
                writeHeader(size + written, at: header)
                c.commitScratch(4, reserved: 4)
                c.enqueue(shared: payload)
                guard let p = c.reserveScratch(written) else { return }
                p.copyMemory(from: trailer.baseAddress!, byteCount: written)
                c.commitScratch(written, reserved: written)
            }
        }
    }

    /// An event as one WebSocket message: the header's size depends on the
    /// whole length, so the trailer is made first; the shared payload is still
    /// queued by reference when large.
    private func sendWebSocketEvent(_ payload: SharedBytes, seq: UInt64, unread: FrameEncoding.RecipientUnread?, cursor: UInt64,
                                    on c: TCPConnection) {
        withUnsafeTemporaryAllocation(byteCount: FrameEncoding.maxTrailerBytes, alignment: 1) { trailer in
            let written = FrameEncoding.eventTrailer(seq: seq, unread: unread, cursor: cursor, into: trailer.baseAddress!)
            let size = payload.count, h = headerBytes(size + written)
            let copied = size <= Self.copyPayloadsUpTo
            let reserved = h + (copied ? size + written : 0)
            guard let p = c.reserveScratch(reserved) else { return }
            writeHeader(size + written, at: p)
            guard copied else {
                c.commitScratch(h, reserved: reserved)
                c.enqueue(shared: payload)
                guard let t = c.reserveScratch(written) else { return }
                t.copyMemory(from: trailer.baseAddress!, byteCount: written)
                c.commitScratch(written, reserved: written)
                return
            }
            (p + h).copyMemory(from: payload.base, byteCount: size)
            (p + h + size).copyMemory(from: trailer.baseAddress!, byteCount: written)
            c.commitScratch(reserved, reserved: reserved)
        }
    }

    @inline(__always)
    private func writeHeader(_ payloadBytes: Int, at p: UnsafeMutableRawPointer) {
        switch framing {
        case .lengthPrefixed: p.storeBytes(of: UInt32(payloadBytes).bigEndian, as: UInt32.self)
        case .webSocket: WebSocketFrames.writeHeader(.binary, length: payloadBytes, at: p)
        case .webSocketText: WebSocketFrames.writeHeader(.text, length: payloadBytes, at: p)
        }
    }
}
