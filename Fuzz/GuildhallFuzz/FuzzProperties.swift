// What each fuzz target holds true of any input (see FuzzTargets.swift).
// Also used by the sweep (FuzzSweep.swift), which feeds generated inputs
// through the same checks.

import GuildhallLoop
import GuildhallWire
import SwiftProtobuf

enum FrameProperties {
    static let limit = 4096

    /// Frames (or the error) an input gives when fed in the given pieces.
    static func decode(_ pieces: [ArraySlice<UInt8>]) -> (frames: [[UInt8]], error: FrameDecodeError?) {
        var decoder = FrameDecoder(maxFrameBytes: limit)
        var frames: [[UInt8]] = []
        for piece in pieces {
            decoder.feed(Array(piece))
            do {
                while let f = try decoder.next() {
                    precondition(f.count <= limit, "a frame over the limit came out")
                    frames.append(f)
                }
            } catch {
                return (frames, error)
            }
        }
        return (frames, nil)
    }

    /// Whole or split anywhere: the same frames, the same error.
    static func check(_ bytes: [UInt8]) {
        let whole = decode([bytes[...]])
        let at = splitPoint(bytes)
        let split = decode([bytes[..<at], bytes[at...]])
        precondition(whole.frames == split.frames && whole.error == split.error, "a split changed what was decoded")
        var oneByOne = FrameDecoder(maxFrameBytes: limit)
        var count = 0
        for b in bytes {
            oneByOne.feed([b])
            guard let frames = try? drain(&oneByOne) else { break }
            count += frames
        }
        precondition(whole.error != nil || count == whole.frames.count, "byte by byte gave another count")
    }

    private static func drain(_ d: inout FrameDecoder) throws -> Int {
        var n = 0
        while try d.next() != nil { n += 1 }
        return n
    }
}

enum SendProperties {
    /// Where the hand-written send decoder answers, swift-protobuf decodes the
    /// same frame to the same send; the same for the acknowledgement reader.
    static func check(_ bytes: [UInt8]) {
        checkAck(bytes)
        guard let (id, send) = MessageWire.readSend(bytes) else { return }
        guard let frame = try? GHFrame(serializedBytes: bytes), case .request(let r)? = frame.kind, case .sendMessage(let m)? = r.body else {
            preconditionFailure("the hand-written decoder read a send that swift-protobuf does not")
        }
        precondition(r.id == id && m.channelID == send.channelID && m.clientID == send.clientID && m.mentions == send.mentions
                     && m.mentionAll == send.mentionAll && m.needReceipt == send.needReceipt, "the two decoders disagree")
        switch send.body {
        case .text(let t)?: precondition(m.body.text == t, "the two decoders disagree on the text")
        case .custom(let type, let data)?: precondition(m.body.custom.type == type && Array(m.body.custom.data) == data, "the two decoders disagree on the custom body")
        case nil: break
        }
    }

    private static func checkAck(_ bytes: [UInt8]) {
        guard let (id, seq) = MessageWire.readAck(bytes) else { return }
        guard let frame = try? GHFrame(serializedBytes: bytes), case .request(let r)? = frame.kind, case .ack(let a)? = r.body else {
            preconditionFailure("the hand-written reader read an acknowledgement that swift-protobuf does not")
        }
        precondition(r.id == id && a.eventSeq == seq && a.received.isEmpty, "the two decoders disagree on the acknowledgement")
    }
}

enum MessagePlaceProperties {
    /// Wherever the hand-written place reader answers and swift-protobuf
    /// decodes the frame, they say the same: the same place, or no channel
    /// message. (The reader may step aside; it does not check the UTF-8 of
    /// strings it skips, which the generated decoder refuses.)
    static func check(_ bytes: [UInt8]) {
        let got = bytes.withUnsafeBytes { MessageWire.messagePlace($0) }
        guard got != .unreadable, let frame = try? GHFrame(serializedBytes: bytes) else { return }
        var want = MessageWire.EventMessage.notAMessage
        if case .message(let m)? = frame.event.body { want = .place(server: m.serverID, channel: m.channelID, seq: m.seq) }
        precondition(got == want, "the place reader disagrees")
    }
}

enum ProxyHeaderProperties {
    /// The PROXY header reader decides on a prefix and keeps its decision as
    /// bytes follow: a header's length is within what it read (and within
    /// the protocol's bounds), and every shorter prefix of a header asks for more.
    static func check(_ bytes: [UInt8]) {
        let whole = ProxyHeader.read(bytes)
        switch whole {
        case .header(_, let length):
            precondition(length <= bytes.count && length <= 16 + ProxyHeader.v2MaxBody, "a header longer than its input")
            precondition(ProxyHeader.read(bytes.prefix(length)) == whole, "a header read differently without what follows it")
            let cut = splitPoint(bytes) % max(length, 1)
            precondition(ProxyHeader.read(bytes.prefix(cut)) == .needMore, "a header's prefix taken for a decision")
        case .absent, .invalid:
            // More bytes do not change a decision already made on these.
            precondition(ProxyHeader.read(bytes + [0x0D, 0x0A]) == whole || whole == .absent, "a decision changed by later bytes")
        case .needMore:
            precondition(bytes.count < 16 + ProxyHeader.v2MaxBody, "more asked of a full buffer")
        }
    }
}

enum WebSocketProperties {
    /// Whole or split: the same messages; no message over the limit.
    static func check(_ bytes: [UInt8]) {
        let limit = 4096
        let whole = WebSocketReader(maxMessageBytes: limit).feed(bytes)
        let reader = WebSocketReader(maxMessageBytes: limit)
        let at = splitPoint(bytes)
        var first = reader.feed(Array(bytes[..<at]))
        if !first.failed && first.peerClosed == nil {
            let second = reader.feed(Array(bytes[at...]))
            first.messages += second.messages
            first.failed = second.failed
            first.peerClosed = second.peerClosed
        }
        for m in whole.messages { precondition(m.payload.count <= limit, "a message over the limit came out") }
        // Whole or split, the same messages in the same order, as far as both got. (The verdict
        // on a frame still incomplete may differ: wslay checks a partial close frame's text as it
        // arrives, so one of them can refuse it before the other has seen the bad byte.)
        let (w, p) = (whole.messages.map(\.payload), first.messages.map(\.payload))
        precondition(w.starts(with: p) || p.starts(with: w), "a split at \(at) changed the messages")
        if !whole.failed && !first.failed { precondition(w == p, "a split at \(at) lost or added a message") }
    }
}
