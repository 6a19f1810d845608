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
    /// with this recipient's own fields (seq, own unread numbers, inbox
    /// cursor) in the same event (`RecipientEvent`).
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

/// One recipient's frame of a shared event (FrameEncoding): the event's tag
/// and length, the shared fields, then the recipient's own (seq, unread
/// numbers, inbox cursor). A payload that is not one event keeps its bytes
/// whole, and the recipient's fields follow as a second event part.
struct RecipientEvent {
    /// Not retained: a `RecipientEvent` lives only inside the `sendEvent`
    /// that was given the payload (a retain and release per delivery otherwise).
    unowned(unsafe) let payload: SharedBytes
    let seq: UInt64
    let unread: FrameEncoding.RecipientUnread?
    let cursor: UInt64
    /// Where the shared fields start in the payload (0: the payload is kept whole).
    private let fieldsStart: Int
    /// Bytes of the event's tag and length written per recipient (0 when the payload is kept whole).
    private let headerBytes: Int
    /// Bytes of the recipient's own fields, with their event's tag and length when the payload is kept whole.
    private let ownBytes: Int

    init(_ payload: SharedBytes, seq: UInt64, unread: FrameEncoding.RecipientUnread?, cursor: UInt64) {
        self.payload = payload
        self.seq = seq
        self.unread = unread
        self.cursor = cursor
        let own = FrameEncoding.recipientFieldsLength(seq: seq, unread: unread, cursor: cursor)
        // Read per recipient rather than kept with the payload: two or three
        // bytes about to be copied anyway (0.15% of shape D's loop).
        if let start = FrameEncoding.sharedEventFields(payload.base, count: payload.count) {
            fieldsStart = start
            headerBytes = FrameEncoding.eventHeaderLength(payload.count - start + own)
            ownBytes = own
        } else {
            fieldsStart = 0
            headerBytes = 0
            ownBytes = FrameEncoding.eventHeaderLength(own) + own
        }
    }

    /// The frame's payload bytes (the transport's framing not counted).
    var frameBytes: Int { headerBytes + payload.count - fieldsStart + ownBytes }
    /// Whether the shared bytes are copied into the frame rather than queued by reference.
    var copied: Bool { payload.count <= SharedPayloads.copiedUpTo }

    /// Writes the whole frame payload (`frameBytes`) at `p`.
    func write(into p: UnsafeMutableRawPointer) {
        var at = p
        if headerBytes > 0 { at += FrameEncoding.writeEventHeader(payload.count - fieldsStart + ownBytes, into: at) }
        let shared = payload.count - fieldsStart
        at.copyMemory(from: payload.base + fieldsStart, byteCount: shared)
        writeOwn(into: at + shared)
    }

    /// Queues the frame with the shared bytes by reference: the transport's
    /// `header` bytes (written by `transport`) and the event's, the shared
    /// fields, then the recipient's own.
    func queue(on tcp: TCPConnection, header: Int, _ transport: (UnsafeMutableRawPointer) -> Void) {
        guard let p = tcp.reserveScratch(header + headerBytes) else { return }
        transport(p)
        if headerBytes > 0 { _ = FrameEncoding.writeEventHeader(payload.count - fieldsStart + ownBytes, into: p + header) }
        tcp.commitScratch(header + headerBytes, reserved: header + headerBytes)
        tcp.enqueue(shared: payload, from: fieldsStart)
        guard let q = tcp.reserveScratch(ownBytes) else { return }
        writeOwn(into: q)
        tcp.commitScratch(ownBytes, reserved: ownBytes)
    }

    private func writeOwn(into p: UnsafeMutableRawPointer) {
        if headerBytes > 0 {
            _ = FrameEncoding.writeRecipientFields(seq: seq, unread: unread, cursor: cursor, into: p)
        } else {
            _ = FrameEncoding.eventTrailer(seq: seq, unread: unread, cursor: cursor, into: p)
        }
    }
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
        let event = RecipientEvent(payload, seq: seq, unread: unread, cursor: cursor)
        if event.copied {
            let n = event.frameBytes
            guard let p = tcp.reserveScratch(4 + n) else { return }
            p.storeBytes(of: UInt32(n).bigEndian, as: UInt32.self)
            event.write(into: p + 4)
            tcp.commitScratch(4 + n, reserved: 4 + n)
        } else {
            event.queue(on: tcp, header: 4) { $0.storeBytes(of: UInt32(event.frameBytes).bigEndian, as: UInt32.self) }
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

    /// The shared payload is still queued by reference when large.
    func sendEvent(_ payload: SharedBytes, seq: UInt64, unread: FrameEncoding.RecipientUnread?, cursor: UInt64) {
        if let json { return json.rendering(payload).write(seq: seq, unread: unread, cursor: cursor, on: tcp) }
        let event = RecipientEvent(payload, seq: seq, unread: unread, cursor: cursor)
        let n = event.frameBytes, h = WebSocketFrames.headerBytes(length: n)
        if event.copied {
            guard let p = tcp.reserveScratch(h + n) else { return }
            WebSocketFrames.writeHeader(.binary, length: n, at: p)
            event.write(into: p + h)
            tcp.commitScratch(h + n, reserved: h + n)
        } else {
            event.queue(on: tcp, header: h) { WebSocketFrames.writeHeader(.binary, length: n, at: $0) }
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
