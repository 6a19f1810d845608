// A loop's JSON renderings of shared event payloads, for its `guildhall.json`
// sessions: a fan-out hands every recipient the same payload in a row, so
// the last one rendered is kept and each payload is turned into JSON once
// per loop however many browsers receive it. Loop thread only.

import GuildhallLoop
import GuildhallWire

final class JSONEvents {
    /// A class: handing it to each recipient costs one reference count, where
    /// a struct of three references cost three (seen in a profile of shape A).
    final class Rendering {
        let event: JSONFrames.SharedEvent
        /// `event.body` as bytes write queues share.
        let body: SharedBytes
        init(event: JSONFrames.SharedEvent, body: SharedBytes) { self.event = event; self.body = body }
    }

    private var lastPayload: SharedBytes?
    private var last: Rendering?

    /// `payload` (Frame{event{...}}) rendered for JSON sessions.
    func rendering(_ payload: SharedBytes) -> Rendering {
        if let last, lastPayload === payload { return last }
        let event = JSONFrames.SharedEvent(payload: UnsafeRawBufferPointer(start: payload.base, count: payload.count))
        let made = Rendering(event: event, body: SharedBytes(event.body))
        lastPayload = payload
        last = made
        return made
    }
}

extension JSONEvents.Rendering {
    /// Queues the event as one text message for one recipient: its head, the
    /// shared body (by reference when large), then the closing braces. A
    /// method of the rendering, so the per-recipient path reads its fields
    /// without copying them out (each copy cost reference counts).
    func write(seq: UInt64, unread: FrameEncoding.RecipientUnread?, cursor: UInt64, on c: TCPConnection) {
        withUnsafeTemporaryAllocation(byteCount: event.maxHeadBytes, alignment: 1) { head in
            let written = JSONFrames.head(event, seq: seq, unread: unread, cursor: cursor, into: head.baseAddress!)
            let size = body.count, tail = MemoryLayout.size(ofValue: JSONFrames.closingBraces)
            let length = written + size + tail, h = WebSocketFrames.headerBytes(length: length)
            let copied = size <= SharedPayloads.copiedUpTo
            let reserved = h + written + (copied ? size + tail : 0)
            guard let p = c.reserveScratch(reserved) else { return }
            WebSocketFrames.writeHeader(.text, length: length, at: p)
            (p + h).copyMemory(from: head.baseAddress!, byteCount: written)
            if copied {
                if size > 0 { (p + h + written).copyMemory(from: body.base, byteCount: size) }
                (p + h + written + size).storeBytes(of: JSONFrames.closingBraces, as: UInt16.self)
                return c.commitScratch(reserved, reserved: reserved)
            }
            c.commitScratch(reserved, reserved: reserved)
            c.enqueue(shared: body)
            guard let t = c.reserveScratch(tail) else { return }
            t.storeBytes(of: JSONFrames.closingBraces, as: UInt16.self)
            c.commitScratch(tail, reserved: tail)
        }
    }
}
