// The writer thread: owns the write connection and commits in groups.
//
// The loop submits jobs (a ticket plus the rows one operation changes). The
// writer wakes, takes everything queued, and commits it in transactions of
// at most `maxBatch` jobs: one fsync serves many sends. If a transaction
// fails, it is rolled back and its jobs are retried one per transaction, so
// one bad job fails alone and the jobs after it still commit. Each job's
// outcome goes back through `onCommitted`, in submission order, only after
// its COMMIT returned (DESIGN §2: durable before acknowledged).
//
// When the writer is idle, the loop may commit a few jobs itself
// (`commitIfIdle`): a lone send then costs no hand-over to this thread and
// back, two wake-ups that were most of a quiet server's send latency. The
// connection sits in a seat that only one thread holds at a time, and the
// writer takes jobs from its queue only while holding it, so a job committed
// by the loop can never pass one the writer has taken.

import Dispatch
import Foundation
import GuildhallCore

/// One row change.
public enum StoreWrite: Sendable, Equatable {
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
    /// One side of a direct conversation: what it received and read.
    case directSide(conversation: UInt64, DirectConversation.Side)
    /// A direct message read on its own (Agora's per-message read).
    case directRead(conversation: UInt64, reader: UserID, uid: MessageUID, sentTime: UInt64)
    /// A device of the user received the channel's messages up to the seq.
    case receivedSeq(UserID, ChannelID, UInt64)
    /// A message's new body (by its sender).
    case messageEdited(MessageUID, MessageContent, time: UInt64)
    /// A message recalled or deleted: its body is emptied, the tombstone stays.
    case messageRemoved(MessageUID, Removal)
    /// A reply joined the thread under `root`.
    case threadReply(root: MessageUID, time: UInt64)
    /// A reaction added (or, with `added` false, taken back).
    case reaction(MessageUID, user: UserID, type: UInt32, added: Bool, time: UInt64)
}

/// One operation's writes, committed together or not at all.
public struct WriteJob: Sendable {
    public let ticket: UInt64
    public let writes: [StoreWrite]
    public init(ticket: UInt64, writes: [StoreWrite]) { self.ticket = ticket; self.writes = writes }
}

/// What became of a job. `error` is for logs, never for clients.
public struct WriteOutcome: Sendable {
    public let ticket: UInt64
    public let error: StoreError?
    /// Microseconds from submission to commit.
    public let latencyMicros: UInt64
}

public final class StoreWriter: Sendable {
    private let queue = JobQueue<(WriteJob, UInt64)>()
    /// Jobs waiting for the writer thread (metrics).
    public var queueDepth: Int { queue.count }
    private let done = DispatchSemaphore(value: 0)
    private let seat: WriterSeat
    private let maxBatch: Int

    /// Opens the write connection and prepares its statements on the calling
    /// thread, then starts the writer thread.
    init(path: String, synchronous: String, maxBatch: Int,
         onCommitted: @escaping @Sendable ([WriteOutcome]) -> Void) throws(StoreError) {
        seat = try WriterSeat(try WriterConnection.open(path: path, synchronous: synchronous))
        self.maxBatch = max(1, maxBatch)
        let thread = Thread { [queue, done, seat, maxBatch = self.maxBatch] in
            StoreWriter.run(seat, queue: queue, maxBatch: maxBatch, onCommitted: onCommitted)
            seat.close()
            done.signal()
        }
        thread.name = "guildhall-writer"
        thread.start()
    }

    /// Commits `jobs` on the calling thread and returns their outcomes, if
    /// the writer is idle with nothing queued; nil otherwise (submit them).
    /// The caller must have no earlier job whose outcome it has not handled,
    /// or outcomes would reach it out of order.
    public func commitIfIdle(_ jobs: [WriteJob]) -> [WriteOutcome]? {
        seat.ifFree { statements -> [WriteOutcome]? in
            guard queue.isEmpty else { return nil }
            let start = DispatchTime.now().uptimeNanoseconds
            var outcomes: [WriteOutcome] = []
            StoreWriter.commitInBatches(jobs.map { ($0, start) }, statements: statements, maxBatch: maxBatch) { outcomes += $0 }
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

    /// Commits everything queued, then stops the thread and closes the connection.
    public func stop() {
        queue.stop()
        done.wait()
    }

    private static func run(_ seat: WriterSeat, queue: JobQueue<(WriteJob, UInt64)>, maxBatch: Int,
                            onCommitted: @Sendable ([WriteOutcome]) -> Void) {
        while true {
            queue.waitForWork()
            let stopping = seat.whenFree { statements in
                let (jobs, stopping) = queue.take()
                commitInBatches(jobs, statements: statements, maxBatch: maxBatch, report: onCommitted)
                return stopping
            } ?? true
            if stopping && queue.isEmpty { return }
        }
    }

    /// Commits `jobs` (each with its submission time) in transactions of at
    /// most `maxBatch`, reporting each transaction's outcomes in order.
    private static func commitInBatches(_ jobs: [(WriteJob, UInt64)], statements: WriterStatements, maxBatch: Int,
                                        report: ([WriteOutcome]) -> Void) {
        var index = 0
        while index < jobs.count {
            let end = min(index + maxBatch, jobs.count)
            let batch = jobs[index..<end]
            let failed = commit(batch.map(\.0), statements: statements)
            let now = DispatchTime.now().uptimeNanoseconds
            report(batch.map { job, submitted in
                WriteOutcome(ticket: job.ticket, error: failed[job.ticket], latencyMicros: (now &- submitted) / 1000)
            })
            index = end
        }
    }

    /// Commits `jobs` in one transaction; when that fails, one transaction
    /// per job. Returns the failed tickets with their errors.
    private static func commit(_ jobs: [WriteJob], statements: WriterStatements) -> [UInt64: StoreError] {
        guard let error = attempt(jobs, statements: statements) else { return [:] }
        if jobs.count == 1 { return [jobs[0].ticket: error] }
        var failed: [UInt64: StoreError] = [:]
        for job in jobs {
            if let error = attempt([job], statements: statements) { failed[job.ticket] = error }
        }
        return failed
    }

    /// Runs `jobs` in one transaction; returns the error, or nil when it committed.
    private static func attempt(_ jobs: [WriteJob], statements: WriterStatements) -> StoreError? {
        do {
            try statements.begin.run()
            for job in jobs { try statements.apply(job.writes) }
            try statements.commit.run()
            return nil
        } catch {
            try? statements.rollback.run()
            return error
        }
    }
}

enum WriterConnection {
    static func open(path: String, synchronous: String) throws(StoreError) -> SQLiteConnection {
        let c = try SQLiteConnection(path: path)
        try c.execute("PRAGMA journal_mode=WAL")
        try c.execute("PRAGMA synchronous=\(synchronous)")
        // The checkpointer thread keeps the WAL short; this is only the
        // backstop should it fall behind (40 MB of 4 KiB pages).
        try c.execute("PRAGMA wal_autocheckpoint=10000")
        try Schema.migrate(c)
        return c
    }
}

/// The write connection and its statements behind a lock: whoever holds it
/// is the only thread using the connection (opened NOMUTEX), which is why the
/// unchecked conformance is safe.
final class WriterSeat: @unchecked Sendable {
    private let lock = NSLock()
    private var connection: SQLiteConnection?
    private var statements: WriterStatements?

    init(_ connection: SQLiteConnection) throws(StoreError) {
        self.connection = connection
        statements = try WriterStatements(connection)
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

    /// Finalizes the statements and closes the connection.
    func close() {
        lock.lock()
        defer { lock.unlock() }
        statements = nil
        connection = nil
    }
}
