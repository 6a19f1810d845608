// How a session's frames reach its peer (docs/architecture.md): the session
// hands its sink protobuf `Frame` payloads and never frames bytes or sees a
// socket. `TCPFrameSink` frames each with a 4-byte big-endian length;
// `WebSocketFrameSink` sends each as one WebSocket message, binary protobuf
// (`guildhall.proto`) or JSON text (`guildhall.json`, JSONFrames), and
// closes as WebSocket does. Tests hand a session a sink that records
// (Tests/…/SessionTests.swift). Writes only into the connection's queue;
// the gateway flushes it once per loop turn. Loop thread only.

import GuildhallCore
import GuildhallLoop
import GuildhallWire

protocol FrameSink: AnyObject {
    /// The socket it writes to: the gateway's handle for reading, flushing,
    /// closing and moving it (nil for a sink with none). The session never uses it.
    var connection: TCPConnection? { get }
    /// Bytes queued and not yet taken by the kernel.
    var queuedBytes: Int { get }
    /// Queues one frame.
    func send(_ frame: GHFrame)
    /// Queues one frame from its payload (an encoded Frame).
    func send(payload: [UInt8])
    /// Queues the answer to send `id`: Frame{response{id, message}} (`MessageWire.answer`).
    func sendAnswer(id: UInt64, message: [UInt8])
    /// Queues bytes already framed by the transport (WebSocket control frames wslay made).
    func send(framed bytes: [UInt8])
    /// Queues one event: the payload every recipient shares (Frame{event{body}})
    /// followed by this recipient's trailer (seq, own unread numbers, inbox
    /// cursor), which protobuf merges into the event.
    func sendEvent(_ payload: SharedBytes, seq: UInt64, unread: FrameEncoding.RecipientUnread?, cursor: UInt64)
    /// Queues why the session ends (a SessionClosed event outside the event sequence) as the transport closes.
    func sendClosed(_ reason: GHCloseReason, _ message: String)
    func stopReading()
    func startReading()
}

/// Shared payloads up to this size are copied next to their framing and
/// trailer instead of queued by reference: a flush then writes one
/// contiguous run instead of three pieces per event, and the kernel walks one iovec.
enum SharedPayloads {
    static let copiedUpTo = 1024
}

extension FrameSink {
    func sendAnswer(id: UInt64, message: [UInt8]) { send(payload: MessageWire.answer(id: id, message: message)) }

    static func closedFrame(_ reason: GHCloseReason, _ message: String) -> GHFrame {
        var frame = GHFrame()
        frame.event.closed.reason = reason
        frame.event.closed.message = message
        return frame
    }
}

/// The frames of guildhall's TCP protocol: a 4-byte big-endian length, then the payload.
final class TCPFrameSink: FrameSink {
    let tcp: TCPConnection

    init(_ connection: TCPConnection) { tcp = connection }

    var connection: TCPConnection? { tcp }
    var queuedBytes: Int { tcp.queuedBytes }
    func stopReading() { tcp.stopReading() }
    func startReading() { tcp.startReading() }

    func send(_ frame: GHFrame) { send(payload: FrameEncoding.payload(frame)) }

    func send(payload: [UInt8]) {
        payload.withUnsafeBytes { raw in
            let n = raw.count
            guard let p = tcp.reserveScratch(4 + n) else { return }
            p.storeBytes(of: UInt32(n).bigEndian, as: UInt32.self)
            if n > 0 { (p + 4).copyMemory(from: raw.baseAddress!, byteCount: n) }
            tcp.commitScratch(4 + n, reserved: 4 + n)
        }
    }

    /// Framed in the write buffer itself: no array made and copied for it.
    func sendAnswer(id: UInt64, message: [UInt8]) {
        let n = MessageWire.answerSize(id: id, messageBytes: message.count)
        guard let p = tcp.reserveScratch(4 + n) else { return }
        p.storeBytes(of: UInt32(n).bigEndian, as: UInt32.self)
        var w = ProtoCursor((p + 4).assumingMemoryBound(to: UInt8.self))
        MessageWire.writeAnswer(id: id, message: message, into: &w)
        precondition(w.at == (p + 4 + n).assumingMemoryBound(to: UInt8.self), "an answer written other than measured")
        tcp.commitScratch(4 + n, reserved: 4 + n)
    }

    func send(framed bytes: [UInt8]) { tcp.queueFramed(bytes) }

    func sendEvent(_ payload: SharedBytes, seq: UInt64, unread: FrameEncoding.RecipientUnread?, cursor: UInt64) {
        let size = payload.count
        if size <= SharedPayloads.copiedUpTo {
            // The trailer is written first, after the payload, and the
            // header then knows the whole length: one pass over the trailer.
            let reserved = 4 + size + FrameEncoding.maxTrailerBytes
            guard let p = tcp.reserveScratch(reserved) else { return }
            (p + 4).copyMemory(from: payload.base, byteCount: size)
            let written = FrameEncoding.eventTrailer(seq: seq, unread: unread, cursor: cursor, into: p + 4 + size)
            p.storeBytes(of: UInt32(size + written).bigEndian, as: UInt32.self)
            tcp.commitScratch(4 + size + written, reserved: reserved)
        } else {
            withUnsafeTemporaryAllocation(byteCount: FrameEncoding.maxTrailerBytes, alignment: 1) { trailer in
                let written = FrameEncoding.eventTrailer(seq: seq, unread: unread, cursor: cursor, into: trailer.baseAddress!)
                guard let header = tcp.reserveScratch(4) else { return }
                header.storeBytes(of: UInt32(size + written).bigEndian, as: UInt32.self)
                tcp.commitScratch(4, reserved: 4)
                tcp.enqueue(shared: payload)
                tcp.queueFramed(UnsafeRawBufferPointer(start: trailer.baseAddress, count: written))
            }
        }
    }

    func sendClosed(_ reason: GHCloseReason, _ message: String) { send(Self.closedFrame(reason, message)) }
}

/// One unmasked WebSocket message per frame: binary protobuf, or text in
/// proto3's JSON mapping with the loop's renderings of shared events.
final class WebSocketFrameSink: FrameSink {
    let tcp: TCPConnection
    /// Nil: binary (`guildhall.proto`).
    private let json: JSONEvents?

    init(_ connection: TCPConnection, json: JSONEvents?) {
        tcp = connection
        self.json = json
    }

    var connection: TCPConnection? { tcp }
    var queuedBytes: Int { tcp.queuedBytes }
    func stopReading() { tcp.stopReading() }
    func startReading() { tcp.startReading() }
    private var opcode: WebSocketFrames.Opcode { json == nil ? .binary : .text }

    func send(_ frame: GHFrame) { queue(json == nil ? FrameEncoding.payload(frame) : JSONFrames.text(frame)) }

    func send(payload: [UInt8]) { queue(json == nil ? payload : JSONFrames.text(payload: payload)) }

    func send(framed bytes: [UInt8]) { tcp.queueFramed(bytes) }

    private func queue(_ message: [UInt8]) {
        message.withUnsafeBytes { raw in
            let n = raw.count, h = WebSocketFrames.headerBytes(length: n)
            guard let p = tcp.reserveScratch(h + n) else { return }
            WebSocketFrames.writeHeader(opcode, length: n, at: p)
            if n > 0 { (p + h).copyMemory(from: raw.baseAddress!, byteCount: n) }
            tcp.commitScratch(h + n, reserved: h + n)
        }
    }

    /// The header's size depends on the whole length, so the trailer is made
    /// first; the shared payload is still queued by reference when large.
    func sendEvent(_ payload: SharedBytes, seq: UInt64, unread: FrameEncoding.RecipientUnread?, cursor: UInt64) {
        if let json { return json.rendering(payload).write(seq: seq, unread: unread, cursor: cursor, on: tcp) }
        withUnsafeTemporaryAllocation(byteCount: FrameEncoding.maxTrailerBytes, alignment: 1) { trailer in
            let written = FrameEncoding.eventTrailer(seq: seq, unread: unread, cursor: cursor, into: trailer.baseAddress!)
            let size = payload.count, h = WebSocketFrames.headerBytes(length: size + written)
            let copied = size <= SharedPayloads.copiedUpTo
            let reserved = h + (copied ? size + written : 0)
            guard let p = tcp.reserveScratch(reserved) else { return }
            WebSocketFrames.writeHeader(.binary, length: size + written, at: p)
            guard copied else {
                tcp.commitScratch(h, reserved: reserved)
                tcp.enqueue(shared: payload)
                tcp.queueFramed(UnsafeRawBufferPointer(start: trailer.baseAddress, count: written))
                return
            }
            (p + h).copyMemory(from: payload.base, byteCount: size)
            (p + h + size).copyMemory(from: trailer.baseAddress!, byteCount: written)
            tcp.commitScratch(reserved, reserved: reserved)
        }
    }

    /// The SessionClosed event, then a close as WebSocket does: 4000 + the close reason's number, and its text.
    func sendClosed(_ reason: GHCloseReason, _ message: String) {
        send(Self.closedFrame(reason, message))
        send(framed: WebSocketFrames.close(code: Self.closeCode(reason), reason: message))
    }

    /// The WebSocket close code for a close reason (4000-4999: for applications, RFC 6455 §7.4.2).
    static func closeCode(_ reason: GHCloseReason) -> UInt16 { 4000 + UInt16(clamping: reason.rawValue) }
}

extension TCPConnection {
    /// Queues bytes as they are (already framed), copied.
    func queueFramed(_ bytes: [UInt8]) { bytes.withUnsafeBytes { queueFramed($0) } }

    func queueFramed(_ raw: UnsafeRawBufferPointer) {
        guard !raw.isEmpty, let p = reserveScratch(raw.count) else { return }
        p.copyMemory(from: raw.baseAddress!, byteCount: raw.count)
        commitScratch(raw.count, reserved: raw.count)
    }
}
