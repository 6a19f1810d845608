// One client connection and, after login, its session: identity, liveness,
// the frame decoder and the per-session event sequence. Loop thread only.
//
// Nothing is written to the socket here directly: responses and events are
// queued on the connection through the session's `FrameSink` (which frames
// them for the transport) and the session is put on the flush list, which
// the loop drains once per turn with one write per session (DESIGN §4).

import GuildhallCore
import GuildhallLoop
import GuildhallWire

final class Session {
    /// `detached`: logged in, but its connection dropped; it keeps its
    /// subscriptions and collects events until resumed or the window ends.
    enum Phase { case awaitingLogin, active, detached, closed }

    // The fields every delivery touches come first, so they share the
    // object's first cache lines (a thousand sessions per fan-out do not fit in cache).
    let key: UInt64
    /// The last fan-out that reached this session: one delivery per event without a set of keys.
    var deliveryMark: UInt64 = 0
    /// The current connection, for the per-event path: borrowing through it
    /// costs no atomic reference count operation (measured: retains and
    /// releases were close to half of the loop's time on shape A; atomics are slow here).
    private var connectionRef: Unmanaged<TCPConnection>?
    /// Sequence of the last event sent; the next event gets +1.
    private(set) var eventSeq: UInt64 = 0
    /// Highest inbox ord queued to this session (see also `ackedOrd`).
    private(set) var queuedOrd: UInt64 = 0
    var phase = Phase.awaitingLogin
    /// On the flush list already this turn.
    var isDirty = false
    /// Events not yet acknowledged, for a resume (MISSION §1).
    private(set) var replay: ReplayRing<ReplayEntry>
    var user: UserID = ""
    /// Queued bytes past which the session is closed as a slow consumer.
    var outboundCap: Int
    /// Bytes a resume replayed at once, allowed above the cap until the queue drains.
    private var capSlack = 0
    /// The current connection; nil while detached.
    private(set) var connection: TCPConnection? {
        didSet { connectionRef = connection.map { Unmanaged.passUnretained($0) } }
    }
    private(set) var peer: String
    /// The transport's framing of what this session queues.
    let sink = FrameSink()
    var decoder: FrameDecoder
    var liveness: SessionLiveness
    var device: DeviceID = ""
    var sessionID = ""
    /// While offline sync runs: its progress; live events wait in `held`.
    var sync: OfflineSync?
    private(set) var held: [ReplayEntry] = []
    /// Highest inbox ord acknowledged (the device's sync cursor), and the one last written.
    private(set) var ackedOrd: UInt64 = 0
    var writtenOrd: UInt64 = 0
    /// Loop time the session was detached, and why the server cut the connection (if it did).
    var detachedAt: UInt64 = 0
    var dropReason: GHCloseReason?
    /// Loop time the outbound queue went over the soft cap, while it stays over.
    var overSoftCapSince: UInt64?
    /// Write progress seen by the last sweep, and since when none was made with bytes queued.
    var writesSeen: UInt64 = 0
    var unwrittenSeen = 0
    var stalledSince: UInt64?
    /// Closed as a slow consumer at the next flush.
    var overflowed = false
    /// Too many live events waited for sync: ended at the next flush.
    var heldOverflow = false
    /// Why the connection is not being read; it is read again when no reason is left.
    private(set) var readPauses: ReadPauses = []
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
    private unowned let flushList: FlushList

    init(key: UInt64, connection: TCPConnection, liveness: SessionLiveness, maxFrameBytes: Int, outboundCap: Int,
         replayCapacity: Int, flushList: FlushList) {
        self.outboundCap = outboundCap
        self.key = key
        self.connection = connection
        self.connectionRef = Unmanaged.passUnretained(connection)
        self.peer = connection.peer
        self.liveness = liveness
        self.decoder = FrameDecoder(maxFrameBytes: maxFrameBytes)
        self.replay = ReplayRing(capacity: replayCapacity)
        self.flushList = flushList
    }

    var isOpen: Bool { phase != .closed }
    /// Logged in, attached or not.
    var isLoggedIn: Bool { phase == .active || phase == .detached }

    func respond(_ id: UInt64, _ result: GHResponse.OneOf_Result) {
        guard isOpen, let connection else { return }
        var frame = GHFrame()
        frame.response.id = id
        frame.response.result = result
        sink.send(frame, on: connection)
        markDirty()
    }

    /// Queues an answer already encoded (a Frame payload).
    func respond(encoded payload: [UInt8]) {
        guard isOpen, let connection else { return }
        sink.send(payload, on: connection)
        markDirty()
    }

    func fail(_ id: UInt64, _ failure: Failure) { respond(id, .error(GHError(failure))) }

    /// Queues an event whose payload (Frame{event{body}}, no seq) was encoded
    /// once for every recipient; this session's seq, its own unread numbers
    /// for a message and the inbox `cursor` of an item addressed to the user
    /// go in a trailer that merges into the payload. During offline sync the
    /// event waits until sync completes.
    func push(event payload: SharedBytes, unread: FrameEncoding.RecipientUnread? = nil, cursor: UInt64 = 0) {
        guard isLoggedIn else { return }
        if cursor > queuedOrd { queuedOrd = cursor }
        let entry = ReplayEntry(payload: payload, unread: unread, cursor: cursor, ord: queuedOrd)
        if sync != nil {
            // A client that never acknowledges its sync must not make the
            // server hold live events without bound: past the replay buffer's
            // size the session ends (its addressed items stay in the inbox).
            if held.count >= (replay.capacity > 0 ? replay.capacity : 10_000) { heldOverflow = true; markDirty(); return }
            held.append(entry)
            return
        }
        send(entry)
    }

    /// Sends an event now, even during sync (sync's own items).
    /// Consuming, so the entry moves into the replay buffer without another retain of its payload.
    func send(_ entry: consuming ReplayEntry) {
        eventSeq += 1
        if let ref = connectionRef {
            let seq = eventSeq
            ref._withUnsafeGuaranteedRef { write(entry, seq: seq, to: $0, checkCap: true) }
        }
        replay.append(entry)
    }

    private func write(_ e: ReplayEntry, seq: UInt64, to connection: TCPConnection, checkCap: Bool) {
        sink.sendEvent(e.payload, seq: seq, unread: e.unread, cursor: e.cursor, on: connection)
        if checkCap && connection.queuedBytes > outboundCap {
            if connection.queuedBytes > outboundCap + capSlack { overflowed = true }
        } else {
            capSlack = 0
        }
        markDirty()
    }

    /// Sends an offline item (inbox `ord`) now.
    func sendOffline(_ payload: SharedBytes, ord: UInt64) {
        if ord > queuedOrd { queuedOrd = ord }
        send(ReplayEntry(payload: payload, unread: nil, cursor: 0, ord: ord))
    }

    /// The device's stored cursor: items up to it were synced before.
    func syncedFrom(_ cursor: UInt64) {
        if cursor > ackedOrd { ackedOrd = cursor; writtenOrd = cursor }
        if cursor > queuedOrd { queuedOrd = cursor }
    }

    /// An inbox item this session needs no event for (its own change) or
    /// learns of another way; acknowledging later events covers it.
    func noteInboxItem(_ ord: UInt64) {
        if ord > queuedOrd { queuedOrd = ord }
    }

    /// Ends offline sync: the held live events go out, in order.
    func finishSync() {
        sync = nil
        let waiting = held
        held = []
        for e in waiting { send(e) }
    }

    /// The client has every event up to `seq`: forget them, and move the
    /// acknowledged inbox position. Returns whether that position moved.
    @discardableResult
    func acknowledge(upTo seq: UInt64) -> Bool {
        let before = ackedOrd
        replay.acknowledge(upTo: min(seq, eventSeq)) { e in if e.ord > ackedOrd { ackedOrd = e.ord } }
        return ackedOrd > before
    }

    /// Drops the connection but keeps the session (see `Phase.detached`).
    func detach(at now: UInt64) -> TCPConnection? {
        let old = connection
        connection = nil
        phase = .detached
        detachedAt = now
        overSoftCapSince = nil
        overflowed = false
        return old
    }

    /// Takes over `newConnection`: `answer` queues the resume's answer, then
    /// the events after `seq` follow. Returns how many were replayed.
    func attach(_ newConnection: TCPConnection, replayingAfter seq: UInt64, answer: () -> Void) -> Int {
        connection = newConnection
        readPauses = []
        peer = newConnection.peer
        phase = .active
        answer()
        acknowledge(upTo: seq)
        let missed = replay.events(after: seq)
        var n = seq
        for e in missed {
            n += 1
            write(e, seq: n, to: newConnection, checkCap: false)
        }
        capSlack = newConnection.queuedBytes
        return missed.count
    }

    /// Tells the peer why the session ends, outside the event sequence (seq 0):
    /// it is never replayed.
    func sendClosed(_ reason: GHCloseReason, _ message: String) {
        guard let connection else { return }
        var closed = GHSessionClosed()
        closed.reason = reason
        closed.message = message
        var frame = GHFrame()
        frame.event.closed = closed
        sink.send(frame, on: connection)
        markDirty()
    }

    /// Gives up the connection (the session ends, or another takes it over).
    func handOver() -> TCPConnection? {
        let c = connection
        connection = nil
        phase = .closed
        return c
    }

    /// Stops reading the connection for `reason` (its peer's requests wait in the kernel).
    func pauseReading(_ reason: ReadPauses) {
        if readPauses.isEmpty { connection?.stopReading() }
        readPauses.insert(reason)
    }

    /// Drops `reason`; reading resumes once no reason is left.
    func resumeReading(_ reason: ReadPauses) {
        guard readPauses.contains(reason) else { return }
        readPauses.remove(reason)
        if readPauses.isEmpty && isOpen { connection?.startReading() }
    }

    func markDirty() {
        if !isDirty {
            isDirty = true
            flushList.sessions.append(self)
        }
    }
}

/// One event as a session sent it, kept for replay. Compact (48 bytes):
/// one is written per delivery per recipient, and the rings of a thousand
/// sessions do not fit in cache, so its size is memory traffic on the
/// fan-out path.
struct ReplayEntry {
    let payload: SharedBytes
    /// The session's `queuedOrd` when it was pushed: acknowledging this
    /// event acknowledges every inbox item up to it. For an item addressed
    /// to the user it is the item's own inbox ord, which the trailer carries.
    let ord: UInt64
    private let readSeq: UInt64
    private let ackTimestamp: UInt64
    private let unreadCount: UInt32
    private let mentionedCount: UInt32
    private let flags: UInt8

    private static let hasUnread: UInt8 = 1
    private static let carriesCursor: UInt8 = 2

    /// `cursor`: the item's inbox ord when it is addressed to the user, else
    /// 0; `ord` is then at least the cursor, and the entry keeps the cursor
    /// (a lower ord only acknowledges less).
    init(payload: SharedBytes, unread: FrameEncoding.RecipientUnread?, cursor: UInt64, ord: UInt64) {
        self.payload = payload
        self.ord = cursor != 0 ? cursor : ord
        readSeq = unread?.readSeq ?? 0
        ackTimestamp = unread?.ackTimestamp ?? 0
        // Saturating: four billion unread messages in one channel is beyond any display.
        unreadCount = UInt32(clamping: unread?.unreadCount ?? 0)
        mentionedCount = UInt32(clamping: unread?.mentionedCount ?? 0)
        flags = (unread != nil ? Self.hasUnread : 0) | (cursor != 0 ? Self.carriesCursor : 0)
    }

    var unread: FrameEncoding.RecipientUnread? {
        guard flags & Self.hasUnread != 0 else { return nil }
        return FrameEncoding.RecipientUnread(unreadCount: UInt64(unreadCount), mentionedCount: UInt64(mentionedCount),
                                             ackTimestamp: ackTimestamp, readSeq: readSeq)
    }

    var cursor: UInt64 { flags & Self.carriesCursor != 0 ? ord : 0 }
}

/// Progress of one offline sync (MISSION §7).
struct OfflineSync {
    /// Inbox items up to this ord are synced; later ones arrive live.
    let horizon: UInt64
    /// The ord the next package starts after (nil before the device cursor is read).
    var after: UInt64?
    /// Seq of the last item of the package in flight, awaiting its acknowledgement.
    var awaitingSeq: UInt64 = 0
    /// More packages remain after the one in flight.
    var more = false
    /// Offline items sent.
    var items = 0
}

/// Why a session's connection is not read (DESIGN §2, §4): its publishes
/// would push the storage queue or the loop's outbound bytes past their bounds.
struct ReadPauses: OptionSet {
    let rawValue: UInt8
    static let storage = ReadPauses(rawValue: 1)
    static let outbound = ReadPauses(rawValue: 2)
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
