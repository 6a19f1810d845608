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
    /// The last fan-out that reached this session: one delivery per event without a set of keys.
    var deliveryMark: UInt64 = 0
    /// Closed as a slow consumer at the next flush.
    var overflowed = false
    /// Auto-subscribe mode (MISSION §4.2).
    var autoSubscribe = false
    /// Servers this session entered as a guest.
    var guestOf: Set<ServerID> = []
    /// Unread notices to send at the next flush, coalesced per channel.
    var pendingUnread: [ChannelID: UnreadNotice] = [:]
    /// The unread status last sent per channel, for edge-only status events.
    var sentUnreadStatus: [ChannelID: Bool] = [:]
    /// Channels whose typer list changed since the last typing frame.
    var pendingTyping: Set<ChannelID> = []
    /// When the last typing frame per channel went out (loop clock).
    var lastTypingFrame: [ChannelID: UInt64] = [:]
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
    /// once for every recipient; this session's seq, and its own unread
    /// numbers for a message, go in a trailer that merges into the payload.
    func push(event payload: SharedBytes, unread: FrameEncoding.RecipientUnread? = nil) {
        guard isOpen else { return }
        eventSeq += 1
        let seq = eventSeq
        let trailer = FrameEncoding.eventTrailerLength(seq: seq, unread: unread)
        guard let prefix = connection.reserveScratch(4) else { return }
        prefix.storeBytes(of: UInt32(payload.count + trailer).bigEndian, as: UInt32.self)
        connection.commitScratch(4, reserved: 4)
        connection.enqueue(shared: payload)
        if let p = connection.reserveScratch(FrameEncoding.maxTrailerBytes) {
            connection.commitScratch(FrameEncoding.eventTrailer(seq: seq, unread: unread, into: p), reserved: FrameEncoding.maxTrailerBytes)
        }
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

/// Which unread event a session owes for a channel.
enum UnreadNotice {
    /// The full unread info (unread-count subscribers, and the user's own read changes).
    case info
    /// Only the read/unread edge (unread-status subscribers).
    case status
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
