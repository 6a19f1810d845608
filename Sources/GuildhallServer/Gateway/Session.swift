// One client connection and, after login, its session as its gateway keeps
// it: the shell around its state machine (SessionState.swift), carrying out
// what the state decides for each event, plus identity, liveness, the frame
// decoder and backpressure. What the session receives and its interest are
// the home's (`HomeSession`), which reaches this side through `SessionPort`.
// Loop thread only (its gateway's loop).
//
// The session knows no transport: responses and events go to its
// `FrameSink` (which frames them for TCP or WebSocket and queues them on the
// connection) and the session is put on the flush list, which the loop
// drains once per turn with one write per session (docs/architecture.md).
// Which answers are the client's (the gateway's own carried requests and
// forwarded sends are not) is the gateway's to say (SessionPort.swift).

import GuildhallCore
import GuildhallLoop
import GuildhallWire

final class Session {
    // The fields every delivery touches come first, so they share the
    // object's first cache lines (a thousand sessions per fan-out do not fit in cache).
    let key: UInt64
    /// The current sink, for the per-event path (`sink` holds it): the
    /// concrete sinks are borrowed without an atomic reference count. A call
    /// through an existential retains and releases it around the call, even
    /// `unowned(unsafe)`, and that retain held 11-19% of the loops' samples
    /// on shapes A and D (docs/performance.md).
    private var eventSink = EventSink.none
    /// On the flush list already this turn.
    var isDirty = false
    /// An answer is queued for the session's next write (HeldAnswers.swift).
    var answerHeld = false
    /// The phase, event numbering, replay buffer and inbox cursor (SessionState.swift).
    private(set) var state: SessionState
    var user: UserID = ""
    /// Queued bytes past which the session is closed as a slow consumer.
    var outboundCap: Int
    /// Bytes a resume replayed at once, allowed above the cap until the queue drains.
    private var capSlack = 0
    /// Where its frames go; nil while detached.
    private(set) var sink: (any FrameSink)? {
        didSet { eventSink = EventSink(sink) }
    }
    private(set) var peer: String
    /// The peer's address without its port: what failed logins count against.
    var peerAddress: Substring { peer[..<(peer.lastIndex(of: ":") ?? peer.endIndex)] }

    /// A trusted proxy named the client (a PROXY header, X-Forwarded-For): limits and logs see it, not the proxy.
    func proxied(for client: String) { peer = client }
    var decoder: InboundFrames
    var liveness: SessionLiveness
    /// Requests it may still make, per rate class (RequestLimits.swift).
    var budget: RequestBudget
    var device: DeviceID = ""
    var sessionID = ""
    /// Loop time the outbound queue went over the soft cap, while it stays over.
    var overSoftCapSince: UInt64?
    /// Write progress seen by the last sweep, and since when none was made with bytes queued.
    var writesSeen: UInt64 = 0
    var unwrittenSeen = 0
    var stalledSince: UInt64?
    /// Bytes of events written since the client last acknowledged progress
    /// (Ack, or a heartbeat's last_event_seq), and when the first of them was
    /// written: a frozen client whose kernel still takes the bytes shows here,
    /// not in the write queue (docs/reliability.md S4).
    private(set) var unackedBytes = 0
    private(set) var unackedSince: UInt64 = 0
    private var ackedEventSeq: UInt64 = 0
    /// Unacknowledged bytes below this never count as a stall (a quiet client acknowledging seldom).
    static let ackStallBytes = 64 * 1024
    /// Closed as a slow consumer at the next flush.
    var overflowed = false
    /// Too many live events waited for sync: ended at the next flush.
    var heldOverflow = false
    /// Why the connection is not being read; it is read again when no reason is left.
    private(set) var readPauses: ReadPauses = []
    /// Frames are being handled (`Gateway.drainFrames`): resuming reading must not handle them again inside.
    var draining = false
    /// The seq that ends the offline package in flight; its acknowledgement is reported to the home.
    var awaitingPackageSeq: UInt64 = 0
    /// The home was told this session is behind on its writes (and not since that it caught up).
    var reportedBehind = false
    /// Whether its login asked for auto-subscribe mode (the homes that are not its user's hear it when it opens).
    var autoSubscribeAtLogin = false
    /// The login the user's home was asked to admit (its request id), until it answers. `user`
    /// is the token's from then on, so that a move of its home can end the login too.
    var admissionAsked: UInt64?
    /// Requests forwarded to a home on another loop and not yet answered, and their bytes.
    private var credit = RequestCredit()
    /// What it subscribed to, and requests the gateway made again for it at a guild's new home (SubscriptionCarry.swift).
    var ledger = SubscriptionLedger()
    /// Typer lists waiting for the session's next typing frame (TypingFrames.swift).
    var typingOwed = TypingOwed()
    /// Presence waiting for the session's next presence frame, and whether it is idle by the timer (PresenceFrames.swift).
    var presenceOwed = PresenceOwed()
    var lastActiveAt: UInt64 = 0
    var isIdleByTimer = false
    /// Requests read and not answered yet, to time them (RequestDurations.swift).
    var unanswered = UnansweredRequests()
    unowned let gateway: Gateway

    init(key: UInt64, sink: any FrameSink, peer: String, liveness: SessionLiveness, maxFrameBytes: Int, outboundCap: Int,
         replayCapacity: Int, replayBytes: Int = .max, gateway: Gateway) {
        self.outboundCap = outboundCap
        self.key = key
        self.sink = sink
        self.eventSink = EventSink(sink)
        self.peer = peer
        self.liveness = liveness
        self.budget = RequestBudget(classes: RateClass.allCases.count, now: liveness.connectedAt)
        self.decoder = InboundFrames(maxFrameBytes: maxFrameBytes)
        self.state = SessionState(replayCapacity: replayCapacity, replayByteCap: replayBytes)
        self.gateway = gateway
    }

    /// Gives back the storage of its inbound buffer and its list of unanswered
    /// requests while they hold nothing (the sweep, when its connection was quiet since the last).
    func giveBackRoom() {
        decoder.giveBackRoom()
        unanswered.giveBackRoom()
    }

    var isOpen: Bool { state.isOpen }
    var isAwaitingLogin: Bool { state.isAwaitingLogin }
    /// Logged in, attached or not.
    var isLoggedIn: Bool { state.isLoggedIn }
    /// Logged in and waiting for a resume.
    var detached: SessionState.Detached? { state.detached }
    var eventSeq: UInt64 { state.eventSeq }
    var isSyncing: Bool { state.isSyncing }
    /// Highest inbox ord the client acknowledged.
    var ackedOrd: UInt64 { state.ackedOrd }

    /// Queues the client's answer to request `id`.
    func queueAnswer(_ id: UInt64, _ result: GHResponse.OneOf_Result) {
        guard isOpen, let sink else { return }
        var frame = GHFrame()
        frame.response.id = id
        frame.response.result = result
        sink.send(frame)
        markDirty()
        timeAnswer(id)
    }

    /// Queues an answer already encoded (a Frame payload). `held`: one no client waits on
    /// (an `Ack`'s), left for the session's next write or `HeldAnswers.holdMillis` (HeldAnswers.swift).
    func queueAnswer(encoded payload: [UInt8], held: Bool = false) {
        guard isOpen, let sink else { return }
        sink.send(payload: payload)
        if !held {
            markDirty()
        } else if !isDirty && !answerHeld {
            answerHeld = true
            gateway.heldAnswers.hold(self)
        }
        // An answer to id 0 (the SDK's login) carries no id field: proto3 leaves zero out.
        if !unanswered.isEmpty { timeAnswer(MessageWire.responseID(payload) ?? 0) }
    }

    /// Queues a send's answer, framed in the write buffer (`FrameSink.sendAnswer`).
    func queueAnswer(to id: UInt64, message: [UInt8]) {
        guard isOpen, let sink else { return }
        sink.sendAnswer(id: id, message: message)
        markDirty(answerOnly: true)
        if !unanswered.isEmpty { timeAnswer(id) }
    }

    private func timeAnswer(_ id: UInt64) {
        if let (kind, seconds) = unanswered.answered(id) { gateway.requestDurations.record(kind, seconds: seconds) }
    }

    /// Queues bytes the transport itself framed (a WebSocket pong or close).
    func queueFramed(_ bytes: [UInt8]) {
        guard !bytes.isEmpty, let sink else { return }
        sink.send(framed: bytes)
        markDirty()
    }

    /// Logged in as `user` on `device`: offline sync starts.
    func loggedIn(_ user: UserID, device: DeviceID, sessionID: String) {
        self.user = user
        self.device = device
        self.sessionID = sessionID
        lastActiveAt = gateway.loop.nowMillis
        state.loggedIn()
    }

    /// Queues an event whose payload (Frame{event{body}}, no seq) was encoded
    /// once for every recipient; this session's seq, its own unread numbers
    /// for a message and the inbox `cursor` of an item addressed to the user
    /// go in a trailer that merges into the payload. During offline sync the
    /// event waits until sync completes.
    func push(event payload: SharedBytes, unread: FrameEncoding.RecipientUnread? = nil, cursor: UInt64 = 0) {
        gateway.settleFanout()
        pushInRun(event: payload, unread: unread, cursor: cursor)
    }

    /// `push` for the gateway's run of channel messages (FanoutRun.swift), which is what would otherwise be settled first.
    @inline(__always)
    func pushInRun(event payload: SharedBytes, unread: FrameEncoding.RecipientUnread?, cursor: UInt64) {
        if let seq = state.numberLive(payload, unread: unread, cursor: cursor) { return write(payload, unread: unread, cursor: cursor, seq: seq) }
        let heldLimit = state.replay.capacity > 0 ? state.replay.capacity : 10_000
        // Made in place, so the replay ring takes it without a copy (and a retain of its payload).
        switch state.push(ReplayEntry(payload: payload, unread: unread, cursor: cursor, ord: max(state.queuedOrd, cursor)), heldLimit: heldLimit) {
        case .write(let seq): write(payload, unread: unread, cursor: cursor, seq: seq)
        case .heldOverflow:
            heldOverflow = true
            markDirty()
        case .held, .dropped: break
        }
    }

    /// Sends an event now, even during sync: an offline item (with its inbox `ord`), the sync and resume markers.
    func send(_ payload: SharedBytes, ord: UInt64 = 0) {
        gateway.settleFanout()
        let seq = state.send(ReplayEntry(payload: payload, unread: nil, cursor: 0, ord: ord))
        write(payload, unread: nil, cursor: 0, seq: seq)
    }

    /// Bytes its connection holds unwritten, read as the per-event path reads
    /// them (the sink borrowed, no protocol call, no retain): the gateway asks
    /// at every session's flush (`reportBehind`), 2% of shape D's loop through `connection`.
    var queuedBytes: Int {
        switch eventSink {
        case .tcp(let borrowed): borrowed._withUnsafeGuaranteedRef { $0.queuedBytes }
        case .webSocket(let borrowed): borrowed._withUnsafeGuaranteedRef { $0.queuedBytes }
        case .other(let sink): sink.queuedBytes
        case .none: 0
        }
    }

    private func write(_ payload: SharedBytes, unread: FrameEncoding.RecipientUnread?, cursor: UInt64, seq: UInt64, checkCap: Bool = true) {
        let queued: Int
        switch eventSink {
        case .tcp(let borrowed):
            queued = borrowed._withUnsafeGuaranteedRef { sink in
                sink.sendEvent(payload, seq: seq, unread: unread, cursor: cursor)
                return sink.queuedBytes
            }
        case .webSocket(let borrowed):
            queued = borrowed._withUnsafeGuaranteedRef { sink in
                sink.sendEvent(payload, seq: seq, unread: unread, cursor: cursor)
                return sink.queuedBytes
            }
        case .other(let sink):
            sink.sendEvent(payload, seq: seq, unread: unread, cursor: cursor)
            queued = sink.queuedBytes
        case .none:
            return
        }
        if unackedBytes == 0 { unackedSince = gateway.loop.nowMillis }
        unackedBytes &+= payload.count
        if checkCap && queued > outboundCap {
            if queued > outboundCap + capSlack { overflowed = true }
        } else {
            capSlack = 0
        }
        markDirty()
    }

    /// The device's stored cursor: items up to it were synced before.
    func syncedFrom(_ cursor: UInt64) { state.syncedFrom(cursor) }

    /// An inbox item this session needs no event for (its own change) or
    /// learns of another way; acknowledging later events covers it.
    func noteInboxItem(_ ord: UInt64) { state.noteInboxItem(ord) }

    /// Ends offline sync: the held live events go out, in order.
    func finishSync() {
        gateway.settleFanout()
        for (e, seq) in state.syncCompleted() { write(e.payload, unread: e.unread, cursor: e.cursor, seq: seq) }
    }

    /// The client has every event up to `seq`: forget them, and move the
    /// acknowledged inbox position. Returns whether that position moved.
    @discardableResult
    func acknowledge(upTo seq: UInt64) -> Bool {
        if seq > ackedEventSeq {
            ackedEventSeq = seq
            unackedBytes = 0
        }
        return state.acknowledge(upTo: seq)
    }

    /// Whether a resume after `seq` can replay everything missed.
    func canResume(after seq: UInt64) -> Bool { state.canResume(after: seq) }

    /// The oldest event seq a resume could start from (for the log and the resume answer).
    var oldestReplayable: UInt64 { state.replay.firstSeq }

    /// Drops the connection but keeps the session (see `SessionState.Phase.detached`); returns the sink it had.
    func detach(at now: UInt64, why: GHCloseReason?) -> (any FrameSink)? {
        let old = sink
        sink = nil
        state.detach(at: now, why: why)
        overSoftCapSince = nil
        overflowed = false
        return old
    }

    /// Takes over `newSink` (the connection of `peer`): `answer` queues the
    /// resume's answer (given why the old connection was cut), then the
    /// events after `seq` follow. Returns how many were replayed.
    func attach(_ newSink: any FrameSink, peer: String, replayingAfter seq: UInt64, answer: (GHCloseReason?) -> Void) -> Int {
        gateway.settleFanout()
        sink = newSink
        readPauses = []
        unackedBytes = 0
        self.peer = peer
        let (why, missed) = state.attach(replayingAfter: seq)
        answer(why)
        var n = seq
        for e in missed {
            n += 1
            write(e.payload, unread: e.unread, cursor: e.cursor, seq: n, checkCap: false)
        }
        capSlack = newSink.queuedBytes
        return missed.count
    }

    /// Tells the peer why the session ends, outside the event sequence (seq 0):
    /// it is never replayed.
    func sendClosed(_ reason: GHCloseReason, _ message: String) {
        gateway.settleFanout()
        guard let sink else { return }
        sink.sendClosed(reason, message)
        markDirty()
    }

    /// Ends the session and gives up its sink (if it has one).
    func close(_ reason: GHCloseReason?) -> (any FrameSink)? {
        gateway.settleFanout()
        let c = sink
        sink = nil
        state.close(reason)
        return c
    }

    /// Stops reading the connection for `reason` (its peer's requests wait in the kernel).
    func pauseReading(_ reason: ReadPauses) {
        if readPauses.isEmpty { sink?.stopReading() }
        readPauses.insert(reason)
    }

    /// Drops `reason`; reading resumes once no reason is left (`Gateway.readingResumed` then handles what waited).
    func unpause(_ reason: ReadPauses) {
        guard readPauses.contains(reason) else { return }
        readPauses.remove(reason)
        if readPauses.isEmpty && isOpen { sink?.startReading() }
    }

    /// A request went to a home on another loop: out of credit, the session is not read.
    func forwarded(requests: Int = 1, bytes: Int) {
        if credit.forwarded(requests: requests, bytes: bytes) { pauseReading(.credit) }
    }

    /// A home on another loop answered one of its requests.
    func homeAnswered() {
        if credit.answered() && readPauses.contains(.credit) { gateway.readingResumed(self, .credit) }
    }

    /// `answerOnly`: what it queued is a send's answer, which goes out after
    /// the turn's events (`FlushList.answered`) unless the session has one queued too.
    func markDirty(answerOnly: Bool = false) {
        if !isDirty {
            isDirty = true
            if answerOnly { gateway.flushList.answered.append(self) } else { gateway.flushList.sessions.append(self) }
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

/// Progress of one offline sync (docs/features.md), as the home drives it.
struct OfflineSync {
    /// Inbox items up to this ord are synced; later ones arrive live.
    let horizon: UInt64
    /// The ord the next package starts after (nil before the device cursor is read).
    var after: UInt64?
    /// A package is out, awaiting its acknowledgement.
    var awaitingAck = false
    /// More packages remain after the one in flight.
    var more = false
    /// Offline items sent.
    var items = 0
}

/// Why a session's connection is not read (docs/architecture.md): its publishes
/// would push the storage queue or the loop's outbound bytes past their bounds.
struct ReadPauses: OptionSet {
    let rawValue: UInt8
    static let storage = ReadPauses(rawValue: 1)
    static let outbound = ReadPauses(rawValue: 2)

    /// A login waits for the home's answer: requests after it wait too.
    static let admission = ReadPauses(rawValue: 4)
    /// Too many requests, or request bytes, wait for a home on another loop (`RequestCredit`).
    static let credit = ReadPauses(rawValue: 8)
}

/// Which unread event a session owes for a channel.
enum UnreadNotice {
    /// The full unread info (unread-count subscribers, and the user's own read changes).
    case info
    /// Only the read/unread edge (unread-status subscribers).
    case status
}

/// Sessions with bytes queued this loop turn, written in this order: a
/// send's fan-out before its answer, since what a sender waits on is its
/// answer, and what everyone else waits on is the message (measured at one
/// subscriber and 1,000 sends a second: the answer's write, first, had held
/// the event back by a write's time).
final class FlushList {
    var sessions: [Session] = []
    /// Sessions that queued only a send's answer (as they did when they became dirty).
    var answered: [Session] = []
    /// Set while the turn's last fan-out run is delivered (`Gateway.flushAll`): each
    /// recipient is written as soon as it has its events (`Gateway.flushRecipient`).
    var recipientPacing: FramePacing?
}

/// The homes (a bit per loop) that asked not to read a session, per reason a home asks for.
struct PausingHomes {
    private var storage: UInt64 = 0
    private var outbound: UInt64 = 0

    var isEmpty: Bool { storage == 0 && outbound == 0 }

    subscript(reason: ReadPauses) -> UInt64 {
        get { reason == .storage ? storage : outbound }
        set { if reason == .storage { storage = newValue } else { outbound = newValue } }
    }
}

/// A session's sink as the per-event path reaches it: the two concrete
/// sinks unretained (the session's `sink` keeps them alive), any other (a
/// test's recording sink) as it is.
private enum EventSink {
    case none
    case tcp(Unmanaged<TCPFrameSink>)
    case webSocket(Unmanaged<WebSocketFrameSink>)
    case other(any FrameSink)

    init(_ sink: (any FrameSink)?) {
        switch sink {
        case nil: self = .none
        case let tcp as TCPFrameSink: self = .tcp(.passUnretained(tcp))
        case let webSocket as WebSocketFrameSink: self = .webSocket(.passUnretained(webSocket))
        case let other?: self = .other(other)
        }
    }
}
