// One client connection and, after login, its session: identity, liveness,
// the frame decoder and the per-session event sequence. Loop thread only.
//
// Nothing is written to the socket here directly: responses and events are
// queued on the connection and the session is put on the flush list, which
// the loop drains once per turn with one write per session (DESIGN §4).

import GuildhallCore
import GuildhallLoop
import GuildhallWire

final class Session {
    enum Phase { case awaitingLogin, active, closed }

    let key: UInt64
    let connection: TCPConnection
    let peer: String
    var decoder: FrameDecoder
    var liveness: SessionLiveness
    var phase = Phase.awaitingLogin
    var user: UserID = ""
    var device: DeviceID = ""
    var sessionID = ""
    /// Sequence of the last event sent; the next event gets +1.
    private(set) var eventSeq: UInt64 = 0
    /// On the flush list already this turn.
    var isDirty = false
    /// Closed as a slow consumer at the next flush.
    var overflowed = false
    /// Queued bytes past which the session is closed as a slow consumer.
    let outboundCap: Int
    private unowned let flushList: FlushList

    init(key: UInt64, connection: TCPConnection, liveness: SessionLiveness, maxFrameBytes: Int, outboundCap: Int, flushList: FlushList) {
        self.outboundCap = outboundCap
        self.key = key
        self.connection = connection
        self.peer = connection.peer
        self.liveness = liveness
        self.decoder = FrameDecoder(maxFrameBytes: maxFrameBytes)
        self.flushList = flushList
    }

    var isOpen: Bool { phase != .closed }

    func respond(_ id: UInt64, _ result: GHResponse.OneOf_Result) {
        guard isOpen else { return }
        var frame = GHFrame()
        frame.response.id = id
        frame.response.result = result
        connection.enqueue(FrameEncoding.framed(frame))
        markDirty()
    }

    func fail(_ id: UInt64, _ failure: Failure) { respond(id, .error(GHError(failure))) }

    /// Queues an event whose payload (Frame{event{body}}, no seq) was encoded
    /// once for every recipient; this session's seq goes in a trailer.
    func push(event payload: SharedBytes) {
        guard isOpen else { return }
        eventSeq += 1
        let seq = eventSeq
        let trailer = FrameEncoding.eventSeqTrailerLength(seq)
        connection.enqueueScratch(4) { p in
            let n = UInt32(payload.count + trailer)
            p.storeBytes(of: n.bigEndian, as: UInt32.self)
            return 4
        }
        connection.enqueue(shared: payload)
        connection.enqueueScratch(FrameEncoding.maxTrailerBytes) { p in FrameEncoding.eventSeqTrailer(seq, into: p) }
        if connection.queuedBytes > outboundCap { overflowed = true }
        markDirty()
    }

    func markDirty() {
        if !isDirty {
            isDirty = true
            flushList.sessions.append(self)
        }
    }
}

/// Sessions with bytes queued this loop turn.
final class FlushList {
    var sessions: [Session] = []
}

extension GHEvent.OneOf_Body {
    /// The shared payload of an event: Frame{event{body}} without a seq.
    var sharedPayload: SharedBytes {
        var frame = GHFrame()
        frame.event.body = self
        return SharedBytes(FrameEncoding.payload(frame))
    }
}
