// A session's life as a state machine (docs/architecture.md): its phase carries what
// only that phase has, and every event the session is given comes back as
// an action for the shell (`Session`) to carry out. No I/O; tested directly.
//
//   awaitingLogin --login--> syncing --sync done--> live
//        |                      |  ^                  |  ^
//        |                      v  |                  v  |
//        |             detached(since, why, syncing) <-+--+  (drop / resume)
//        +--------------------------+-----------------------> closed(reason)
//
// Events: each gets the next event seq and a place in the replay ring (so a
// resume replays exactly what was missed) and is written, except while
// offline sync runs, when live events wait in `held` (docs/features.md: live events
// follow the sync) and go out in order once it completes. A detached session
// keeps numbering and holding events for its resume.

import GuildhallCore
import GuildhallLoop
import GuildhallWire

struct SessionState: ~Copyable {
    enum Phase {
        case awaitingLogin
        /// Logged in, offline sync running (the home drives it); live events wait in `held`.
        case syncing
        case live
        /// Logged in without a connection, waiting for a resume.
        case detached(Detached)
        case closed(GHCloseReason?)
    }

    struct Detached {
        /// Loop time the connection was lost.
        let since: UInt64
        /// Why the server cut the connection, if it did (the resume answer tells the client).
        let why: GHCloseReason?
        /// Offline sync was in progress when the connection was lost; it goes on after a resume.
        let syncing: Bool
    }

    /// What the shell does with one event.
    enum Delivery {
        /// Write it as event `seq` (when a connection is attached).
        case write(seq: UInt64)
        /// It waits for offline sync to complete.
        case held
        /// Too many live events waited for an unacknowledged sync: end the session.
        case heldOverflow
        /// The session is not logged in, or has closed.
        case dropped
    }

    /// What `push` does in the current phase, in one byte next to the other
    /// per-delivery fields: the phase itself, with what it carries, is two
    /// cache lines further on, and a fan-out touches a thousand sessions.
    private enum Mode: UInt8 { case write, hold, drop }

    // The per-delivery fields come first (see `Session`).
    private var mode = Mode.drop
    /// Sequence of the last event numbered; the next event gets +1.
    private(set) var eventSeq: UInt64 = 0
    /// Highest inbox ord queued to this session (see also `ackedOrd`).
    private(set) var queuedOrd: UInt64 = 0
    /// Events not yet acknowledged, for a resume (docs/protocol.md).
    private(set) var replay: ReplayRing<ReplayEntry>
    /// Channel messages the replay buffer let go before the client acknowledged them.
    private var evicted = MissedMessages()
    /// Payload bytes the replay buffer holds, and the most it may: a client that never
    /// acknowledges keeps at most this much alive beside its queue (docs/reliability.md S1); older
    /// events go as past the count, and a resume names them as missed (`missed(after:)`).
    private var replayBytes = 0
    private let replayByteCap: Int
    private(set) var phase = Phase.awaitingLogin {
        didSet {
            switch phase {
            case .live: mode = .write
            case .syncing: mode = .hold
            case .detached(let d): mode = d.syncing ? .hold : .write
            case .awaitingLogin, .closed: mode = .drop
            }
        }
    }
    /// Live events waiting for offline sync to complete.
    private(set) var held: [ReplayEntry] = []
    /// Highest inbox ord acknowledged (the device's sync cursor; the home writes it).
    private(set) var ackedOrd: UInt64 = 0

    init(replayCapacity: Int, replayByteCap: Int = .max) {
        replay = ReplayRing(capacity: replayCapacity)
        self.replayByteCap = replayByteCap
    }

    // MARK: Phase

    var isOpen: Bool { if case .closed = phase { false } else { true } }
    var isAwaitingLogin: Bool { if case .awaitingLogin = phase { true } else { false } }
    /// Logged in, attached or not.
    var isLoggedIn: Bool {
        switch phase {
        case .syncing, .live, .detached: true
        case .awaitingLogin, .closed: false
        }
    }
    var detached: Detached? { if case .detached(let d) = phase { d } else { nil } }
    /// Logged in with a connection.
    var isAttached: Bool {
        switch phase {
        case .syncing, .live: true
        case .awaitingLogin, .detached, .closed: false
        }
    }

    /// Offline sync runs (attached or not): live events wait.
    var isSyncing: Bool {
        switch phase {
        case .syncing: true
        case .detached(let d): d.syncing
        case .awaitingLogin, .live, .closed: false
        }
    }

    /// Logged in: offline sync starts.
    mutating func loggedIn() {
        guard isAwaitingLogin else { return }
        phase = .syncing
    }

    /// Sync completed: the held live events, in order, each with its seq, to write.
    mutating func syncCompleted() -> [(ReplayEntry, seq: UInt64)] {
        switch phase {
        case .syncing: phase = .live
        case .detached(let d) where d.syncing: phase = .detached(Detached(since: d.since, why: d.why, syncing: false))
        default: return []
        }
        let waiting = held
        held = []
        return waiting.map { e in (e, number(e)) }
    }

    /// The connection is gone; the session waits for a resume.
    mutating func detach(at now: UInt64, why: GHCloseReason?) {
        guard isAttached else { return }
        phase = .detached(Detached(since: now, why: why, syncing: isSyncing))
    }

    /// A new connection takes the session over; returns why the old one was
    /// cut (for the resume answer) and the events after `seq` to write again.
    mutating func attach(replayingAfter seq: UInt64) -> (why: GHCloseReason?, missed: [ReplayEntry]) {
        guard let d = detached else { return (nil, []) }
        phase = d.syncing ? .syncing : .live
        acknowledge(upTo: seq)
        return (d.why, replay.events(after: seq))
    }

    mutating func close(_ reason: GHCloseReason?) {
        phase = .closed(reason)
        held = []
    }

    // MARK: Events

    /// A live event: numbered and written, or held during sync.
    /// Consuming, so the entry moves into the replay buffer without another retain of its payload.
    mutating func push(_ entry: consuming ReplayEntry, heldLimit: Int) -> Delivery {
        if entry.ord > queuedOrd { queuedOrd = entry.ord }
        switch mode {
        case .write: return .write(seq: number(entry))
        case .hold: return hold(entry, limit: heldLimit)
        case .drop: return .dropped
        }
    }

    /// A live event numbered and kept for replay, when the session writes
    /// its events now; nil when it does not (then `push` decides). The entry
    /// is made where the ring keeps it, taking its one reference to the
    /// payload: made by the caller and handed over (`consuming`), it was
    /// copied on the way, a second retain and release of the shared payload
    /// per delivery (`objdump` of the fan-out's loop).
    @inline(__always)
    mutating func numberLive(_ payload: SharedBytes, unread: FrameEncoding.RecipientUnread?, cursor: UInt64) -> UInt64? {
        guard mode == .write else { return nil }
        let ord = max(queuedOrd, cursor)
        queuedOrd = ord
        eventSeq += 1
        replayBytes &+= payload.count
        if let gone = replay.append(ReplayEntry(payload: payload, unread: unread, cursor: cursor, ord: ord)) { letGo(gone) }
        if replayBytes > replayByteCap { dropOverCap() }
        return eventSeq
    }

    private mutating func dropOverCap() {
        while replayBytes > replayByteCap && replay.count > 1, let gone = replay.dropOldest() { letGo(gone) }
    }

    private mutating func hold(_ entry: consuming ReplayEntry, limit: Int) -> Delivery {
        // A client that never acknowledges its sync must not make the server
        // hold live events without bound: past the limit the session ends
        // (its addressed items stay in the inbox).
        if held.count >= limit { return .heldOverflow }
        held.append(entry)
        return .held
    }

    /// An event that goes out now whatever the phase (sync's own items, the sync and resume markers); its seq.
    mutating func send(_ entry: consuming ReplayEntry) -> UInt64 {
        if entry.ord > queuedOrd { queuedOrd = entry.ord }
        return number(entry)
    }

    private mutating func number(_ entry: consuming ReplayEntry) -> UInt64 {
        eventSeq += 1
        replayBytes &+= entry.payload.count
        if let gone = replay.append(entry) { letGo(gone) }
        if replayBytes > replayByteCap { dropOverCap() }
        return eventSeq
    }

    private mutating func letGo(_ gone: ReplayEntry) {
        evicted.note(gone.payload)
        replayBytes &-= gone.payload.count
    }

    /// The channel messages after event `seq` the client may not have read:
    /// those the replay buffer let go unacknowledged, and those it holds.
    func missed(after seq: UInt64) -> MissedMessages {
        var missed = evicted
        for e in replay.events(after: seq) { missed.note(e.payload) }
        return missed
    }

    // MARK: The inbox cursor

    /// The device's stored cursor: items up to it were synced before.
    mutating func syncedFrom(_ cursor: UInt64) {
        if cursor > ackedOrd { ackedOrd = cursor }
        if cursor > queuedOrd { queuedOrd = cursor }
    }

    /// An inbox item this session needs no event for (its own change) or
    /// learns of another way; acknowledging later events covers it.
    mutating func noteInboxItem(_ ord: UInt64) {
        if ord > queuedOrd { queuedOrd = ord }
    }

    /// The client has every event up to `seq`: forget them, and move the
    /// acknowledged inbox position. Returns whether that position moved.
    @discardableResult
    mutating func acknowledge(upTo seq: UInt64) -> Bool {
        let before = ackedOrd
        var acked = ackedOrd
        var freed = 0
        replay.acknowledge(upTo: min(seq, eventSeq)) { e in
            if e.ord > acked { acked = e.ord }
            freed &+= e.payload.count
        }
        replayBytes &-= freed
        // Acknowledging past what the buffer let go says those arrived after all.
        if !evicted.isEmpty, seq + 1 >= replay.firstSeq { evicted = MissedMessages() }
        ackedOrd = acked
        return ackedOrd > before
    }

    /// Whether a resume after `seq` can replay everything missed.
    func canResume(after seq: UInt64) -> Bool { seq <= eventSeq && replay.canReplay(after: seq) }
}
