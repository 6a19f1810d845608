// The one runner that carries out handlers' effects (docs/architecture.md): it owns the
// store tickets, the commit of each loop turn, commit settlement, the 503
// when a commit fails, the inbox (ords and the horizon offline sync reads
// up to) and the live copies of addressed items. Loop thread only; it may
// touch the store's queues, the session registry and sessions' write queues.
//
// Contract: `carryOut` commits the effects' writes and inbox rows as one job;
// nothing of them is visible to anyone (answer, events, state) before that
// job is durable, and if it fails the caller gets a 503 and nothing else happens.
// Jobs commit in the order they were made, so inbox items become durable in
// ord order and `inboxFanned` only moves forward.

import GuildhallCore
import GuildhallStore
import GuildhallWire

final class EffectRunner {
    private let store: Store
    private let registry: SessionRegistry
    private let log: ServerLog
    private let clock: @Sendable () -> UInt64
    /// Writes waiting for their commit past which publishers stop being read (`store-queue-max`, live).
    var storeQueueMax: Int
    /// A turn with at most this many writes commits on the loop when the writer is idle (`inline-commit-max`, live).
    var inlineCommitMax: Int
    /// Counts write jobs the loop committed itself (a metric).
    var committedOnLoop: ((Int) -> Void)?
    /// A job's commit failed (counted for the operator).
    var commitFailed: (() -> Void)?
    /// While false (shutting down), sessions paused for storage stay paused.
    var resumesReaders = true
    /// Runs after each batch of settled commits (shutdown waits on it).
    var onSettled: (() -> Void)?
    /// Drops the storage reason not to read a session (and handles what it sent meanwhile).
    var resumeReading: ((HomeSession) -> Void)?
    /// Applies a state change once its writes are durable (with the addressed items' ords), or lets it go when they failed.
    var applyChanges: (([StateChange], [UInt64]) -> Void)?
    var dropChange: ((StateChange) -> Void)?
    /// Carries out a follow-up of a change, stored or not (FollowUps.swift).
    var followUp: ((FollowUp, _ stored: Bool) -> Void)?
    /// The changes that take turns; each settles here (ChangeTurns.swift).
    let turns = ChangeTurns()
    /// Reads what an answer names, once its change is applied (Answers.swift).
    var read: ((AnswerRead) -> GHResponse.OneOf_Result)?
    /// Tells a committed notice's audience (its targeted users had their addressed copies).
    var tellAudience: ((Notice, EventCopy) -> Void)?

    private var nextTicket: UInt64 = 0
    /// Commits handed to the writer, by ticket: a handler's effects, or what a part waits to run.
    private var pendingWrites = TicketWindow<(commit: PendingCommit, writes: Int)>()
    /// The writes of those commits: a job may hold a run of sends (`Home.sendRun`), so the store queue's bound counts these.
    private var queuedWrites = 0
    /// Jobs of this loop turn, handed to the writer together at the end of
    /// the turn: one wake-up and larger commit groups (docs/architecture.md).
    private var turnJobs: [WriteJob] = []
    private var pendingReads: [UInt64: (ReadResult) -> Void] = [:]
    /// Sessions not read while the store queue is full.
    private var pausedForStorage: [HomeSession] = []
    /// The last inbox ord handed out, and the last one committed and delivered live.
    private(set) var lastInboxOrd: UInt64
    private(set) var inboxFanned: UInt64

    /// Tickets carry the home's loop in their low byte: the store's threads hand each outcome to the loop that asked.
    private let lane: UInt64
    /// Inbox ords: this home's residue class of `ordLanes`; in a cluster
    /// the node's id is part of it, so no two nodes issue the same ord.
    private let ordLane: UInt64
    private let ordLanes: UInt64
    /// In a cluster, the shard whose log carries each write of a job (LogShards.swift).
    var logShards: (([StoreWrite]) -> JobShards)?
    /// Where a user's home is (a loop here, or of another node); this node's map without one.
    var userPlace: ((UserID) -> Int)?
    /// Which home holds each user's inbox; how to mail another home.
    private let map: HomeMap
    var post: ((Int, HomeMail) -> Void)?
    /// Completions in commit order, each waiting for its items filed elsewhere, by filing token.
    private var completions: [Completion] = []
    private var filings: [UInt64: Completion] = [:]
    private var nextFiling: UInt64 = 0

    init(store: Store, lane: Int, map: HomeMap, registry: SessionRegistry, log: ServerLog, clock: @escaping @Sendable () -> UInt64, settings: Settings,
         highestInboxOrd: UInt64) {
        self.store = store
        self.lane = UInt64(lane)
        let clustered = !settings.cluster.isEmpty
        ordLane = UInt64(clustered ? settings.nodeID * map.loops + lane : lane)
        ordLanes = UInt64(clustered ? 1024 * map.loops : map.loops)
        self.map = map
        self.registry = registry
        self.log = log
        self.clock = clock
        storeQueueMax = settings.storeQueueMax
        inlineCommitMax = settings.loopCommitMax
        lastInboxOrd = highestInboxOrd
        inboxFanned = highestInboxOrd
    }

    /// A mention or direct message was filed for a user (homed here) with no session online (PushNotices.swift);
    /// nil without a push gateway, so nothing is looked up then.
    var unreached: ((UserID, OwedMessage) -> Void)?

    /// The links a message's files get in an item mailed to a user homed on another node (set by the home).
    var attachmentLinks: (() -> AttachmentLinks)?

    /// Commits not yet settled, and completions waiting for items filed elsewhere.
    var pendingCommits: Int { pendingWrites.count + completions.count }

    // MARK: Effects

    /// Carries out a handler's effects; `id` and `session` are the request
    /// being answered (nil for effects no request waits on). Sends give only
    /// `session`, which the store queue may pause: their state changes answer
    /// each send, stored or not (`Home.messageSent`, `messageNotSent`).
    /// Taken as the runner's own (`consuming`): kept without a copy, which retained each of its arrays.
    func carryOut(_ decided: consuming Effects, answering id: UInt64? = nil, to session: HomeSession? = nil) {
        // (A plain send has neither notices nor addressed items: no clock reading for it.)
        let now = decided.notices.isEmpty && decided.addressed.isEmpty ? 0 : clock()
        // Each notice's event is made once: its targeted users' copies commit with the change.
        let notices = decided.notices.map { ($0, $0.event(at: now)) }
        var e = decided
        for (n, copy) in notices { e.addressed += n.targeted.map { .event(copy, to: $0) } }
        var rows: [InboxRow] = []
        rows.reserveCapacity(e.addressed.count)
        // Per item its ord here, 0 for one filed at the user's home elsewhere.
        var ords: [UInt64] = []
        var mail: [Int: [MailedItem]] = [:]
        for item in e.addressed {
            let userHome = userPlace?(item.user) ?? map.home(user: item.user)
            guard userHome == Int(lane) else {
                let message = Place.isRemote(userHome) ? e.writes.lazy.compactMap { w -> MessageRecord? in
                    if case .message(let m) = w { return m } else { return nil }
                }.first : nil
                mail[userHome, default: []].append(MailedItem(item, message: message, links: self.attachmentLinks?(), now: now))
                ords.append(0)
                continue
            }
            let ord = nextInboxOrd()
            ords.append(ord)
            switch item.stored {
            case .event(let copy): rows.append(InboxRow(ord: ord, user: item.user, at: now, event: copy.stored))
            case .message(let uid): rows.append(InboxRow(ord: ord, user: item.user, at: now, messageUID: uid))
            }
        }
        guard !e.writes.isEmpty || !rows.isEmpty else {
            return committed(CarriedEffects(effects: e, notices: notices, ords: ords, lastRow: nil, mail: mail, id: id, session: session),
                             error: nil)
        }
        let writes = rows.isEmpty ? e.writes : e.writes + rows.map { .inbox($0) }
        // Only the writer holds the writes from here: it frees them, not the loop (nothing after the commit reads them).
        e.writes = []
        enqueue(writes, from: session, .effects(CarriedEffects(effects: e, notices: notices, ords: ords, lastRow: rows.last?.ord, mail: mail,
                                                               id: id, session: session)))
    }

    /// A handler's effects whose commit returned: on failure the 503 and nothing else; on success their completion, in commit order.
    private func committed(_ c: CarriedEffects, error: StoreError?) {
        if error != nil {
            if let session = c.session, let id = c.id { session.fail(id, Failure(.unavailable, c.effects.failure)) }
            for i in c.effects.changes.indices { dropChange?(c.effects.changes[i]) }
            settle(c.effects, stored: false)
            return
        }
        // Nearly always nothing waits: then no closure is made.
        if c.mail.isEmpty && completions.isEmpty {
            complete(c)
        } else {
            completeInOrder({ self.complete(c) }, filing: c.mail)
        }
    }

    /// Once committed (and filed elsewhere): state, the answer, the addressed items' live copies, then the rest.
    private func complete(_ c: CarriedEffects) {
        applyChanges?(c.effects.changes, c.ords)
        if let session = c.session, let id = c.id, let reply = c.effects.reply {
            switch reply {
            case .result(let result): session.respond(id, result)
            case .read(let what): if let read { session.respond(id, read(what)) }
            }
        }
        if let lastRow = c.lastRow { inboxDelivered(upTo: lastRow) }
        for (item, ord) in zip(c.effects.addressed, c.ords) where ord != 0 { deliverLive(item, ord: ord) }
        for (n, copy) in c.notices { tellAudience?(n, copy) }
        for d in c.effects.deliveries { deliver(d) }
        settle(c.effects, stored: true)
    }

    /// The follow-ups of a change that settled, then the next change in its turn.
    private func settle(_ e: Effects, stored: Bool) {
        for f in e.followUps { followUp?(f, stored) }
        if let slot = e.turn { turns.done(slot) }
    }

    // MARK: Items filed at other homes

    /// Runs `complete` once `mail` is filed at the users' homes, and after
    /// every earlier completion that waits (a channel's fan-outs keep their order).
    private func completeInOrder(_ complete: @escaping () -> Void, filing mail: [Int: [MailedItem]]) {
        let c = Completion(waiting: mail.count, run: complete)
        completions.append(c)
        for (home, items) in mail.sorted(by: { $0.key < $1.key }) {
            nextFiling += 1
            filings[nextFiling] = c
            post?(home, .file(items, token: nextFiling))
        }
        runReadyCompletions()
    }

    /// A home filed what this one mailed it.
    func filed(_ token: UInt64) {
        guard let c = filings.removeValue(forKey: token) else { return }
        c.waiting -= 1
        runReadyCompletions()
        onSettled?()
    }

    private func runReadyCompletions() {
        while let first = completions.first, first.waiting == 0 {
            completions.removeFirst()
            first.run()
        }
    }

    /// Items another home committed for users of this one: into their
    /// inboxes, live to their sessions, and `filed` back once durable.
    func file(_ items: [MailedItem], token: UInt64, from home: Int) {
        let now = clock()
        let rows = items.map { item in
            switch item.stored {
            case .event(let bytes): InboxRow(ord: nextInboxOrd(), user: item.user, at: now, event: bytes)
            case .message(let uid): InboxRow(ord: nextInboxOrd(), user: item.user, at: now, messageUID: uid)
            }
        }
        commit(rows.map { .inbox($0) }, from: nil) { [self] error in
            if let error {
                log.error("items from another home not kept for offline sync", ["items": rows.count, "error": error.description])
            } else {
                if let last = rows.last { inboxDelivered(upTo: last.ord) }
                for (item, row) in zip(items, rows) { deliverLive(item, ord: row.ord) }
            }
            post?(home, .filed(token: token))
        }
    }

    private func deliver(_ d: Delivery) {
        switch d.audience {
        case .otherSessions(let user, let except):
            for s in registry.sessions(of: user).values where s.key != except { s.push(event: d.event.payload) }
        }
    }

    private func deliverLive(_ item: MailedItem, ord: UInt64) {
        let reached = registry.sessions(of: item.user)
        if let unreached, reached.isEmpty {
            switch item.stored {
            case .message(let uid): unreached(item.user, .stored(uid))
            case .event(let bytes) where item.owesPush:
                if let e = try? GHEvent(serializedBytes: bytes), case .message(let m)? = e.body { unreached(item.user, .carried(m)) }
            case .event: break
            }
        }
        let sessions = reached.values
        switch item.live {
        case .push(let payload):
            for s in sessions { s.push(event: payload, cursor: ord) }
        case .pushExceptOrigin(let payload, let origin):
            for s in sessions { if s.key == origin { s.noteInboxItem(ord) } else { s.push(event: payload, cursor: ord) } }
        case .noted:
            for s in sessions { s.noteInboxItem(ord) }
        }
    }

    private func deliverLive(_ item: AddressedItem, ord: UInt64) {
        if let unreached, registry.sessions(of: item.user).isEmpty {
            if case .message(let uid) = item.stored { unreached(item.user, .stored(uid)) } else if item.pushOwed != 0 { unreached(item.user, .stored(item.pushOwed)) }
        }
        switch item.live {
        case .push(let copy):
            let payload = copy.payload
            for s in registry.sessions(of: item.user).values { s.push(event: payload, cursor: ord) }
        case .pushExceptOrigin(let copy, let origin):
            for s in registry.sessions(of: item.user).values {
                if s.key == origin { s.noteInboxItem(ord) } else { s.push(event: copy.payload, cursor: ord) }
            }
        case .noted:
            for s in registry.sessions(of: item.user).values { s.noteInboxItem(ord) }
        case .elsewhere:
            break
        }
    }

    // MARK: The inbox

    /// The next inbox ord (increasing, never reused). With several loops each
    /// home hands out the ords of its own residue class, so the homes of
    /// different users never issue the same ord; a user's ords come from its home only.
    private func nextInboxOrd() -> UInt64 {
        let next = lastInboxOrd + 1
        lastInboxOrd = next + (ordLane + ordLanes - next % ordLanes) % ordLanes
        return lastInboxOrd
    }

    /// Shards taken over: their users' items, up to `ord`, are all committed
    /// (by the node that held them); ords go on above them.
    func adoptInbox(upTo ord: UInt64) {
        lastInboxOrd = max(lastInboxOrd, ord)
        inboxFanned = max(inboxFanned, ord)
    }

    /// Inbox items up to `ord` committed and delivered live: a session
    /// logging in now syncs up to here from the store and gets later ones live.
    func inboxDelivered(upTo ord: UInt64) {
        if ord > inboxFanned { inboxFanned = ord }
    }

    // MARK: Storage

    /// Commits `writes`; `then` runs on the loop after the commit returned.
    /// A publisher (`from`) stops being read while too many commits wait.
    func commit(_ writes: [StoreWrite], from session: HomeSession?, then: @escaping (StoreError?) -> Void) {
        enqueue(writes, from: session, .callback(then))
    }

    /// Adds `writes` to this turn's jobs, with what waits on their commit.
    private func enqueue(_ writes: [StoreWrite], from session: HomeSession?, _ pending: PendingCommit) {
        let ticket = nextTicketNumber()
        // A job with no writes is still a commit (and never one for the loop under synchronous=FULL).
        let weight = max(1, writes.count)
        pendingWrites.insert((pending, weight), at: ticket >> 8)
        queuedWrites += weight
        turnJobs.append(WriteJob(ticket: ticket, writes: writes, shards: logShards?(writes)))
        if let session, queuedWrites >= storeQueueMax, !session.readPauses.contains(.storage) {
            session.pauseReading(.storage)
            pausedForStorage.append(session)
        }
    }

    func read(_ request: ReadRequest, then: @escaping (ReadResult) -> Void) {
        let ticket = nextTicketNumber()
        pendingReads[ticket] = then
        store.reader.submit(ticket: ticket, request)
    }

    private func nextTicketNumber() -> UInt64 {
        nextTicket += 1
        return nextTicket << 8 | lane
    }

    /// Runs what waited for each committed job.
    func settle(_ outcomes: [WriteOutcome]) {
        for o in outcomes {
            guard let (commit, writes) = pendingWrites.remove(at: o.ticket >> 8) else {
                // Answered when journaled (JournalAhead.swift): SQLite refused it afterwards, a defect to report.
                if let error = o.error { log.error("journaled write refused by SQLite", ["ticket": o.ticket, "error": error.description]) }
                continue
            }
            if let error = o.error {
                log.error("commit failed", ["ticket": o.ticket, "error": error.description])
                commitFailed?()
            }
            queuedWrites -= writes
            switch commit {
            case .effects(let c): committed(c, error: o.error)
            case .callback(let then): then(o.error)
            }
        }
        resumeReadersIfDrained()
        onSettled?()
    }

    func readsArrived(_ results: [ReadResult]) {
        for r in results { pendingReads.removeValue(forKey: r.ticket)?(r) }
    }

    private func resumeReadersIfDrained() {
        guard !pausedForStorage.isEmpty, queuedWrites < storeQueueMax / 2, resumesReaders else { return }
        // Taken first: a session read again handles the frames it sent
        // meanwhile at once, and may be paused again (and listed again) here.
        let waiting = pausedForStorage
        pausedForStorage.removeAll()
        for s in waiting { resumeReading?(s) }
    }

    /// Jobs journaled this turn wait for the writer's wake-up (`writesOut`).
    private var journaled = false

    /// The loop's writes of this turn are out: the writer may start on what was journaled.
    func writesOut() {
        guard journaled else { return }
        journaled = false
        store.writer.wakeForJournal()
    }

    /// Hands this turn's jobs to the writer. With `inline`, a few jobs and
    /// nothing else outstanding, they are committed right here when the
    /// writer is idle (no wake-up of the writer and of the loop, the most of
    /// a quiet server's send latency), and what waited for them runs now;
    /// jobs that creates go the same way.
    func submitTurnJobs(inline: Bool = false) {
        while !turnJobs.isEmpty {
            let jobs = turnJobs
            turnJobs.removeAll(keepingCapacity: true)
            if inline, queuedWrites <= inlineCommitMax, pendingWrites.count == jobs.count {
                let journaledNow = store.writer.journalIfIdle(jobs)
                if let outcomes = journaledNow ?? store.writer.commitIfIdle(jobs) {
                    journaled = journaled || journaledNow != nil
                    committedOnLoop?(jobs.count)
                    settle(outcomes)
                    continue
                }
            }
            store.writer.submit(jobs)
            return
        }
    }
}

/// A commit the runner waits on: a handler's effects, kept as a value (no
/// closure made, called and freed per send), or what a part runs then.
private enum PendingCommit {
    case effects(CarriedEffects)
    case callback((StoreError?) -> Void)
}

/// A handler's effects and what was decided for them before the commit:
/// each notice's event, each addressed item's ord (0: filed elsewhere), the
/// items mailed to other homes, and the request answered.
private final class CarriedEffects {
    let effects: Effects
    let notices: [(Notice, EventCopy)]
    let ords: [UInt64]
    let lastRow: UInt64?
    let mail: [Int: [MailedItem]]
    let id: UInt64?
    let session: HomeSession?

    init(effects: Effects, notices: [(Notice, EventCopy)], ords: [UInt64], lastRow: UInt64?, mail: [Int: [MailedItem]], id: UInt64?,
         session: HomeSession?) {
        self.effects = effects
        self.notices = notices
        self.ords = ords
        self.lastRow = lastRow
        self.mail = mail
        self.id = id
        self.session = session
    }
}

/// What a commit's effects do once their items filed elsewhere are durable.
private final class Completion {
    var waiting: Int
    let run: () -> Void

    init(waiting: Int, run: @escaping () -> Void) {
        self.waiting = waiting
        self.run = run
    }
}
