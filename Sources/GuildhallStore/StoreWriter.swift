// The writer thread: owns the write connection and commits in groups.
//
// The loop submits jobs (a ticket plus the rows one operation changes). The
// writer wakes, takes everything queued, and commits it in transactions of
// at most `maxBatch` writes (or one job holding more): one fsync serves many
// sends, and a job may itself hold a run of them. If a transaction
// fails, it is rolled back and its jobs are retried one per transaction, so
// one bad job fails alone and the jobs after it still commit. Each job's
// outcome goes back through `onCommitted`, in submission order, only after
// its COMMIT returned (docs/architecture.md: durable before acknowledged).
//
// A loop's few jobs may instead be appended to the local journal and
// answered at once (`journalIfIdle`, JournalAhead.swift); this thread commits
// them behind it, and having stored some, gathers more before it sleeps
// (`JournalAhead.gatherJobs`), so that a quiet server's sends reach SQLite a
// few at a time. Without a journal, when the writer is idle, the loop may
// commit a few jobs itself (`commitIfIdle`): a lone send then costs no
// hand-over to this thread and back, two wake-ups that were most of a quiet
// server's send latency. The
// connection sits in a seat that only one thread holds at a time, and the
// writer takes jobs from its queue only while holding it, so a job committed
// by the loop can never pass one the writer has taken.

import Dispatch
import Foundation
import GuildhallCore
import Synchronization

/// One row change.
public enum StoreWrite: Sendable, Codable, Equatable {
    case directory(DirectoryChange)
    case message(MessageRecord)
    case readPosition(UserID, ChannelID, ReadPosition)
    /// An item for a user's offline sync.
    case inbox(InboxRow)
    /// How far a device has synced.
    case syncCursor(UserID, DeviceID, UInt64)
    /// Turns on received-status flags (never off).
    case receivedStatus(UserID, MessageUID, ReceivedFlags)
    /// Deletes inbox items written before this time (retention).
    case pruneInbox(before: UInt64)
    /// A message's sender asked for group read receipts.
    case receiptRequest(ChannelID, ChannelReceipts.Request)
    /// A member's receipt cursor moved.
    case receiptAdvance(ChannelID, ChannelReceipts.Advance)
    /// A direct conversation was opened.
    case conversation(id: UInt64, users: [UserID], createdAt: UInt64)
    /// A group conversation as it is now: its name, owner and whole member
    /// set (replacing the last; the sides and reads of those gone go with them).
    case group(GroupRow)
    /// One side of a direct conversation: what it received and read.
    case directSide(conversation: UInt64, DirectConversation.Side)
    /// A direct message read on its own (the per-message read).
    case directRead(conversation: UInt64, reader: UserID, uid: MessageUID, sentTime: UInt64)
    /// A device of the user received the channel's messages up to the seq.
    case receivedSeq(UserID, ChannelID, UInt64)
    /// A message's new body (by its sender).
    case messageEdited(MessageUID, MessageContent, time: UInt64, channel: ChannelID)
    /// A message recalled or deleted: its body is emptied, the tombstone stays.
    case messageRemoved(MessageUID, Removal, channel: ChannelID)
    /// A reply joined the thread under `root`.
    case threadReply(root: MessageUID, time: UInt64, channel: ChannelID)
    /// In a cluster: this database has applied shard `shard`'s log up to stream
    /// sequence `seq` (written with what was applied, never logged itself).
    case logPosition(shard: Int, seq: UInt64)
    /// A reaction added (or, with `added` false, taken back).
    /// (The four message changes name the message's channel, or a direct
    /// message's conversation, so a cluster knows whose log they go to.)
    case reaction(MessageUID, user: UserID, type: UInt32, added: Bool, time: UInt64, channel: ChannelID)
    /// An upload was asked for (docs/files.md).
    case fileCreated(FileRecord)
    /// A file's row goes: an upload never sent, or a removed message's file, once the store forgot it (the sweep).
    /// (It names the file's server, or 0 and its conversation, as `fileCreated` does.)
    case fileSwept(UInt64, serverID: ServerID, channelID: UInt64)
    /// A user's presence choice and when they were last seen online (docs/features.md "Presence").
    case presence(UserID, PresenceChoice, lastSeen: UInt64)
    /// A channel message pinned, or unpinned (Pins.swift).
    case pinned(PinRecord)
    case unpinned(ChannelID, MessageUID)
    /// An audit log entry, with the change it records (AuditLog.swift).
    case audited(AuditEntry)
    /// Deletes audit log entries made before this time (retention).
    case pruneAuditLog(before: UInt64)
    /// A user's profile (Profiles.swift).
    case profile(UserProfile)
    /// A device's push token, kept or forgotten (PushNotices.swift).
    case pushRegistered(PushRegistration)
    case pushUnregistered(UserID, DeviceID)
    /// `blocker` blocks `blocked` (or, with `blocks` false, no longer does) in direct conversations (Blocking.swift).
    case directBlock(blocker: UserID, blocked: UserID, blocks: Bool)
    /// Whether `user` accepts direct messages only from people they share a server with (DirectPrivacy.swift).
    case directPrivacy(UserID, serverMatesOnly: Bool)
    /// A channel's incoming webhook made (Webhooks.swift), or deleted. A deleted channel or server takes its webhooks with it.
    case webhookSaved(WebhookRecord)
    case webhookDeleted(id: UInt64, serverID: ServerID)
}

/// One operation's writes, committed together or not at all.
public struct WriteJob: Sendable {
    public let ticket: UInt64
    public let writes: [StoreWrite]
    /// In a cluster, the shard of each write (Journal.swift); nil otherwise.
    public let shards: JobShards?
    /// Its record in the local journal (LocalJournal.swift), 0 when it has none:
    /// it was answered once appended there, and must reach SQLite whatever fails.
    /// Its commit also moves the journal's log position to it.
    public let journalSeq: UInt64
    public init(ticket: UInt64, writes: [StoreWrite], shards: JobShards? = nil, journalSeq: UInt64 = 0) {
        self.ticket = ticket; self.writes = writes; self.shards = shards; self.journalSeq = journalSeq
    }
}

/// What became of a job. `error` is for logs, never for clients.
public struct WriteOutcome: Sendable {
    public let ticket: UInt64
    public let error: StoreError?
    /// Microseconds from submission to commit.
    public let latencyMicros: UInt64
}

public final class StoreWriter: Sendable {
    let queue = JobQueue<(WriteJob, UInt64)>()
    /// Jobs waiting for the writer thread (metrics).
    public var queueDepth: Int { queue.count }
    private let done = DispatchSemaphore(value: 0)
    let seat: WriterSeat
    private let maxBatch: Int
    /// The cluster's log, when there is one (set once, before the first job).
    private let journal: JournalSlot
    /// The search index's thread (nil while search is off), which the writer feeds.
    let indexer: SearchIndexer?
    /// WAL restarts the checkpoint thread asks this writer for.
    let walRestart: WALRestart

    /// Opens the write connection (migrating the database) and prepares its
    /// statements on the calling thread, starts the search index's thread
    /// beside it, then starts the writer thread.
    init(path: String, synchronous: String, maxBatch: Int, searchIndex: Bool,
         onCommitted: @escaping @Sendable ([WriteOutcome]) -> Void) throws(StoreError) {
        let connection = try WriterConnection.open(path: path, synchronous: synchronous, searchIndex: searchIndex)
        let indexer = searchIndex ? try SearchIndexer(folder: (path as NSString).deletingLastPathComponent, mainPath: path) : nil
        self.indexer = indexer
        seat = try WriterSeat(connection, indexer: indexer)
        self.maxBatch = max(1, maxBatch)
        let journal = JournalSlot()
        self.journal = journal
        let walRestart = WALRestart(wakeWriter: { [queue] in queue.nudge() })
        self.walRestart = walRestart
        NamedThread.start("gh-writer") { [queue, done, seat, busyAtClose, ahead, maxBatch = self.maxBatch] in
            StoreWriter.run(seat, queue: queue, maxBatch: maxBatch, journal: journal, ahead: ahead, walRestart: walRestart,
                            onCommitted: onCommitted)
            busyAtClose.record(seat.close())
            done.signal()
        }
    }

    /// The local journal, once `Store` replayed it (single node only).
    let ahead = JournalAheadSlot()

    /// Commits `jobs` on the calling thread and returns their outcomes, if
    /// the writer is idle with nothing queued; nil otherwise (submit them).
    /// The caller must have no earlier job whose outcome it has not handled,
    /// or outcomes would reach it out of order.
    public func commitIfIdle(_ jobs: [WriteJob]) -> [WriteOutcome]? {
        guard journal.current == nil else { return nil }
        return seat.ifFree { statements -> [WriteOutcome]? in
            // Nor past a journaled job waiting for the disk (the writer sets and clears that holding the seat).
            guard queue.isEmpty, ahead.current?.isStuck != true else { return nil }
            let start = DispatchTime.now().uptimeNanoseconds
            var outcomes: [WriteOutcome] = []
            var held: [(WriteJob, UInt64)] = []  // none: these jobs have no journal record
            StoreWriter.commitInBatches(jobs.map { ($0, start) }, statements: statements, maxBatch: maxBatch, held: &held) { outcomes += $0 }
            return outcomes
        } ?? nil
    }

    /// Queues a job; its outcome arrives through `onCommitted`.
    public func submit(_ job: WriteJob) {
        queue.push((job, DispatchTime.now().uptimeNanoseconds))
    }

    /// Queues several jobs with one wake-up of the writer, so they can share a commit.
    public func submit(_ jobs: [WriteJob]) {
        let now = DispatchTime.now().uptimeNanoseconds
        queue.push(contentsOf: jobs.map { ($0, now) })
    }

    /// From now on every job goes through `journal` first (a cluster node, before it serves).
    public func useJournal(_ journal: any Journal) { self.journal.current = journal }

    /// Applies entries read back from the log, on the calling thread, each
    /// with its position; an entry that cannot be applied is skipped (its
    /// position still moves: the log is the truth and it will not change).
    /// Returns the errors of skipped entries.
    public func applyLogged(_ entries: [LoggedWrites]) -> [StoreError] {
        seat.whenFree { statements -> [StoreError] in
            let jobs = entries.enumerated().map { i, e in
                WriteJob(ticket: UInt64(i), writes: e.writes + [.logPosition(shard: e.shard, seq: e.seq)])
            }
            var errors: [StoreError] = []
            for (ticket, error) in StoreWriter.commit(jobs, statements: statements).failed {
                errors.append(error)
                let e = entries[Int(ticket)]
                if let error = StoreWriter.attempt([WriteJob(ticket: 0, writes: [.logPosition(shard: e.shard, seq: e.seq)])], statements: statements) {
                    errors.append(error)
                }
            }
            return errors
        } ?? [StoreError(code: -1, message: "the store is closed")]
    }

    /// Statements left busy when the connection closed (a leak; 0 expected).
    let busyAtClose = BusyAtClose()

    /// Commits everything queued, then stops the thread and closes the connection.
    public func stop() {
        queue.stop()
        done.wait()
        // What the last transactions queued goes into the index before it stops.
        indexer?.stop()
    }

    private static func run(_ seat: WriterSeat, queue: JobQueue<(WriteJob, UInt64)>, maxBatch: Int, journal: JournalSlot,
                            ahead: JournalAheadSlot, walRestart: WALRestart, onCommitted: @Sendable ([WriteOutcome]) -> Void) {
        // Journaled jobs whose commit failed, with the journaled ones queued after
        // them: tried again first, before anything newer, every 50 ms while idle.
        var held: [(WriteJob, UInt64)] = []
        // Journaled jobs were stored last time: the next ones may be pushed
        // without a wake-up. None waiting, it waits for `JournalAhead.gatherJobs`
        // of them (the loop wakes it then) or `gatherSeconds`, whichever comes first.
        var gathering = false
        while true {
            if !held.isEmpty {
                queue.waitForWork(seconds: 0.05)
            } else if gathering {
                if queue.isEmpty { queue.waitForWork(seconds: ahead.current?.gatherSeconds ?? 0) }
            } else {
                queue.sleepUntilPushed()
            }
            let stopping = seat.whenFree { statements in
                let (taken, stopping) = queue.take()
                gathering = taken.contains { $0.0.journalSeq != 0 }
                let jobs = held + taken
                held = []
                // Between two transactions (never on a loop's inline commit): a WAL restart asked for.
                let report = { (outcomes: [WriteOutcome]) in
                    if !outcomes.isEmpty { onCommitted(outcomes) }
                    walRestart.carryOut(on: statements.connection)
                }
                if jobs.isEmpty {
                    // Woken for the restart alone: the loops commit themselves while this thread idles.
                    walRestart.carryOut(on: statements.connection)
                } else if let log = journal.current {
                    commitLogged(jobs, to: log, statements: statements, maxBatch: maxBatch, report: report)
                } else {
                    commitInBatches(jobs, statements: statements, maxBatch: maxBatch, ahead: ahead.current, held: &held, report: report)
                }
                return stopping
            } ?? true
            // Jobs still held at the end stay in the journal: the next start replays them.
            if stopping && queue.isEmpty { return }
        }
    }

    /// Appends `jobs` to the log, then commits those it took, each with the
    /// log positions it reached; the others fail without touching SQLite.
    private static func commitLogged(_ jobs: [(WriteJob, UInt64)], to log: any Journal, statements: WriterStatements, maxBatch: Int,
                                     report: ([WriteOutcome]) -> Void) {
        var index = 0
        while index < jobs.count {
            let end = batchEnd(jobs, from: index, maxWrites: maxBatch)
            let batch = Array(jobs[index..<end])
            let appended = log.append(batch.map(\.0))
            var kept: [(WriteJob, UInt64)] = []
            var refused: [UInt64: StoreError] = [:]
            for ((job, submitted), result) in zip(batch, appended) {
                switch result {
                case .success(let positions):
                    kept.append((WriteJob(ticket: job.ticket, writes: job.writes + positions.map { .logPosition(shard: $0.shard, seq: $0.seq) }),
                                 submitted))
                case .failure(let error): refused[job.ticket] = error
                }
            }
            let failed = refused.merging(commit(kept.map(\.0), statements: statements).failed) { a, _ in a }
            let now = DispatchTime.now().uptimeNanoseconds
            report(batch.map { job, submitted in
                WriteOutcome(ticket: job.ticket, error: failed[job.ticket], latencyMicros: (now &- submitted) / 1000)
            })
            index = end
        }
    }

    /// Where the transaction that starts at `index` ends: at the job that
    /// takes it to `maxWrites` writes, and never before its first job.
    static func batchEnd(_ jobs: [(WriteJob, UInt64)], from index: Int, maxWrites: Int) -> Int {
        var end = index, writes = 0
        while end < jobs.count, end == index || writes + jobs[end].0.writes.count <= maxWrites {
            writes += jobs[end].0.writes.count
            end += 1
        }
        return end
    }

    /// Commits `jobs` (each with its submission time) in transactions of at
    /// most `maxBatch` writes, reporting each transaction's outcomes in order.
    /// A journaled job that fails for want of the disk is held with the
    /// journaled jobs after it (`held`), and the others after it fail: nothing
    /// may reach SQLite ahead of a record it lacks, or a replay would apply
    /// that record out of order. One that SQLite refuses as such (a constraint:
    /// a defect, as its home checked it) could never pass, so it fails alone.
    private static func commitInBatches(_ jobs: [(WriteJob, UInt64)], statements: WriterStatements, maxBatch: Int,
                                        ahead: JournalAhead? = nil, held: inout [(WriteJob, UInt64)],
                                        report: ([WriteOutcome]) -> Void) {
        var index = 0
        while index < jobs.count {
            let end = batchEnd(jobs, from: index, maxWrites: maxBatch)
            let batch = jobs[index..<end]
            let (failed, stuck) = commit(batch.map(\.0), statements: statements)
            let now = DispatchTime.now().uptimeNanoseconds
            let settled = stuck.map { index + $0 } ?? end
            // Told first, so whoever hears of these outcomes finds their records stored.
            // One SQLite refused as such is done with too: no read need wait for it.
            if let stored = jobs[index..<settled].map(\.0.journalSeq).max(), stored > 0 { ahead?.stored(upTo: stored) }
            // A journaled job was answered when appended: its outcome goes back only
            // when SQLite refused it (for the log), so no loop is woken for the rest.
            report(jobs[index..<settled].compactMap { job, submitted in
                guard job.journalSeq == 0 || failed[job.ticket] != nil else { return nil }
                return WriteOutcome(ticket: job.ticket, error: failed[job.ticket], latencyMicros: (now &- submitted) / 1000)
            })
            if let stuck {
                let error = failed[batch[index + stuck].0.ticket] ?? StoreError(code: -1, message: "held")
                held = jobs[settled...].filter { $0.0.journalSeq > 0 }
                ahead?.isStuck(true)
                report(jobs[settled...].filter { $0.0.journalSeq == 0 }.map { job, submitted in
                    WriteOutcome(ticket: job.ticket, error: error, latencyMicros: (now &- submitted) / 1000)
                })
                return
            }
            index = end
        }
        ahead?.isStuck(false)
    }

    /// Commits `jobs` in one transaction; when that fails, one transaction
    /// per job. Returns the failed tickets with their errors, and where a
    /// journaled job failed (the one-by-one tries stop there).
    private static func commit(_ jobs: [WriteJob], statements: WriterStatements) -> (failed: [UInt64: StoreError], stuck: Int?) {
        guard !jobs.isEmpty else { return ([:], nil) }
        guard let error = attempt(jobs, statements: statements) else { return ([:], nil) }
        if jobs.count == 1 { return ([jobs[0].ticket: error], jobs[0].journalSeq > 0 && error.mayPassWhenTriedAgain ? 0 : nil) }
        var failed: [UInt64: StoreError] = [:]
        for (i, job) in jobs.enumerated() {
            guard let error = attempt([job], statements: statements) else { continue }
            failed[job.ticket] = error
            if job.journalSeq > 0 && error.mayPassWhenTriedAgain { return (failed, i) }
        }
        return (failed, nil)
    }

    /// Runs `jobs` in one transaction; returns the error, or nil when it committed.
    static func attempt(_ jobs: [WriteJob], statements: WriterStatements) -> StoreError? {
        do {
            try statements.begin.run()
            for job in jobs {
                try statements.apply(job.writes)
                if job.journalSeq > 0 { try statements.journalHeld(upTo: job.journalSeq) }
            }
            try statements.beforeCommit()
            try statements.commit.run()
            statements.ended(committed: true)
            return nil
        } catch {
            try? statements.rollback.run()
            statements.ended(committed: false)
            return error
        }
    }
}

enum WriterConnection {
    static func open(path: String, synchronous: String, searchIndex: Bool) throws(StoreError) -> SQLiteConnection {
        let c = try SQLiteConnection(path: path)
        try c.execute("PRAGMA journal_mode=WAL")
        try c.execute("PRAGMA synchronous=\(synchronous)")
        // The checkpointer thread keeps the WAL short; this is only the
        // backstop should it fall behind (40 MB of 4 KiB pages).
        try c.execute("PRAGMA wal_autocheckpoint=10000")
        try Schema.migrate(c)
        try SearchIndex.open(c, folder: (path as NSString).deletingLastPathComponent, on: searchIndex)
        return c
    }
}

/// The writer's journal, set once from another thread before jobs need it.
final class JournalSlot: Sendable {
    private let slot = Mutex<(any Journal)?>(nil)
    var current: (any Journal)? {
        get { slot.withLock { $0 } }
        set { slot.withLock { $0 = newValue } }
    }
}

/// The write connection and its statements behind a lock: whoever holds it
/// is the only thread using the connection (opened NOMUTEX), which is why the
/// unchecked conformance is safe.
final class WriterSeat: @unchecked Sendable {
    private let lock = NSLock()
    private var connection: SQLiteConnection?
    private var statements: WriterStatements?

    init(_ connection: SQLiteConnection, indexer: SearchIndexer?) throws(StoreError) {
        self.connection = connection
        statements = try WriterStatements(connection, indexer: indexer)
    }

    /// Runs `body` with the statements, waiting for the seat if needed; nil once closed.
    func whenFree<T>(_ body: (WriterStatements) -> T) -> T? {
        lock.lock()
        defer { lock.unlock() }
        return statements.map(body)
    }

    /// Runs `body` with the statements if the seat is free now; nil otherwise.
    func ifFree<T>(_ body: (WriterStatements) -> T) -> T? {
        guard lock.try() else { return nil }
        defer { lock.unlock() }
        return statements.map(body)
    }

    /// Finalizes the statements and closes the connection; how many statements were left busy.
    @discardableResult
    func close() -> Int {
        lock.lock()
        defer { lock.unlock() }
        let busy = connection?.busyStatements ?? 0
        statements = nil
        connection = nil
        return busy
    }
}

/// A group conversation's row and members (StoreWrite.group).
public struct GroupRow: Sendable, Codable, Equatable {
    public var id: UInt64
    public var name: String
    public var owner: UserID
    public var membersMayAdd: Bool
    /// Ascending.
    public var members: [UserID]
    public var createdAt: UInt64

    public init(id: UInt64, name: String, owner: UserID, membersMayAdd: Bool, members: [UserID], createdAt: UInt64) {
        self.id = id
        self.name = name
        self.owner = owner
        self.membersMayAdd = membersMayAdd
        self.members = members
        self.createdAt = createdAt
    }

    public init(_ c: DirectConversation) {
        self.init(id: c.id, name: c.name, owner: c.owner, membersMayAdd: c.membersMayAdd, members: c.members, createdAt: c.createdAt)
    }
}
