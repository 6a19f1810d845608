// The local journal as the writer, the reader and the loops share it
// (LocalJournal.swift has the file and why it exists): a loop's few jobs are
// appended and answered at once (`StoreWriter.journalIfIdle`), the writer
// commits them behind it, and a read waits until SQLite holds every record
// appended before the read was asked, so a client reads what it was told was
// stored. At open, `Store` replays what SQLite lacks (`replayJournal`).

import CSQLite
import Dispatch
import Foundation
import Synchronization

/// The journal's writes as bytes and back (the server's log format: Proto/log.proto).
public struct JournalCodec: Sendable {
    public let encode: @Sendable ([StoreWrite]) throws -> [UInt8]
    public let decode: @Sendable ([UInt8]) throws -> [StoreWrite]
    public init(encode: @escaping @Sendable ([StoreWrite]) throws -> [UInt8], decode: @escaping @Sendable ([UInt8]) throws -> [StoreWrite]) {
        self.encode = encode; self.decode = decode
    }
}

final class JournalAhead: Sendable {
    let journal: LocalJournal
    let codec: JournalCodec
    /// The last record appended, and the last SQLite holds.
    private let appended: Atomic<UInt64>
    private let held: Atomic<UInt64>
    /// A journaled job's commit failed and waits to be tried again: nothing more is journaled meanwhile.
    private let stuck = Atomic<Bool>(false)
    /// Reads waiting for SQLite to catch up sleep here, woken as it does or as
    /// the journal sticks; `waiting` spares the writer the lock when none waits.
    /// (Ordering: a reader counts itself before it looks at `held`, the writer
    /// sets `held` before it looks at `waiting`, both sequentially consistent,
    /// so either the reader sees the new mark or the writer sees the reader.)
    private let caughtUp = NSCondition()
    private let waiting = Atomic<Int>(0)
    /// Most jobs the writer may have queued for a turn to still be journaled:
    /// what is answered but not yet in SQLite stays a few turns' worth.
    static let queueMax = 64
    /// How long a read waits for SQLite to catch up before it fails.
    static let readWaitSeconds = 5.0
    /// The writer, having stored journaled jobs, gathers the next ones
    /// (StoreWriter.swift): the loop wakes it at a turn's end once
    /// `gatherJobs` wait, and it takes fewer after `gatherSeconds` by its own
    /// timer. So a quiet server's sends reach SQLite a few per transaction,
    /// committed in the pause after a turn's writes, where before the loop woke
    /// the writer once per send: at F (one send a millisecond) a `futex` call on
    /// the loop and a transaction per message on the other core
    /// (docs/performance.md, the levers table).
    static let gatherJobs = 4
    let gatherSeconds: Double
    public static let defaultGatherSeconds = 0.02

    /// The writer's queue, which this journal's records join in order.
    private let queue: JobQueue<(WriteJob, UInt64)>

    init(_ journal: LocalJournal, codec: JournalCodec, heldUpTo seq: UInt64, queue: JobQueue<(WriteJob, UInt64)>, gatherSeconds: Double) {
        self.journal = journal
        self.queue = queue
        self.gatherSeconds = gatherSeconds
        self.codec = codec
        appended = Atomic(seq)
        held = Atomic(seq)
    }

    var lastAppended: UInt64 { appended.load(ordering: .acquiring) }
    var lastStored: UInt64 { held.load(ordering: .acquiring) }
    var isStuck: Bool { stuck.load(ordering: .relaxed) }

    func stored(upTo seq: UInt64) {
        held.store(seq, ordering: .sequentiallyConsistent)
        wakeReaders()
    }

    func isStuck(_ value: Bool) {
        stuck.store(value, ordering: .sequentiallyConsistent)
        if value { wakeReaders() }
    }

    private func wakeReaders() {
        guard waiting.load(ordering: .sequentiallyConsistent) > 0 else { return }
        caughtUp.lock()
        caughtUp.broadcast()
        caughtUp.unlock()
    }

    /// Appends one record per job; each job, with its record's position among
    /// its writes, joins the writer's queue in the same order. Throws when
    /// the append failed: nothing was queued.
    func append(_ jobs: [WriteJob]) throws {
        let payloads = try jobs.map { try codec.encode($0.writes) }
        try journal.append(payloads, held: held.load(ordering: .acquiring)) { first in
            let now = DispatchTime.now().uptimeNanoseconds
            // Not woken yet: the writer, started now, would take the CPU from
            // the loop before its fan-out is written (`StoreWriter.wakeForJournal`).
            queue.push(contentsOf: jobs.enumerated().map { i, job in
                let seq = first + UInt64(i)
                return (WriteJob(ticket: job.ticket, writes: job.writes, shards: job.shards, journalSeq: seq), now)
            }, wake: false)
            appended.store(first + UInt64(jobs.count) - 1, ordering: .releasing)
        }
    }

    /// Waits until SQLite holds record `seq`; false when it did not in time.
    /// While a record waits for the disk (`isStuck`), reads go on without it
    /// rather than fail: it is durable in the journal and reaches SQLite, in
    /// order, once the disk takes writes again.
    func waitStored(_ seq: UInt64) -> Bool {
        guard held.load(ordering: .acquiring) < seq else { return true }
        // The writer may be gathering (`gatherSeconds`): a read does not wait for that.
        queue.nudge()
        let deadline = Date(timeIntervalSinceNow: Self.readWaitSeconds)
        waiting.add(1, ordering: .sequentiallyConsistent)
        defer { waiting.subtract(1, ordering: .sequentiallyConsistent) }
        caughtUp.lock()
        defer { caughtUp.unlock() }
        while held.load(ordering: .sequentiallyConsistent) < seq && !stuck.load(ordering: .sequentiallyConsistent) {
            if !caughtUp.wait(until: deadline) {
                return held.load(ordering: .sequentiallyConsistent) >= seq || stuck.load(ordering: .sequentiallyConsistent)
            }
        }
        return true
    }
}

/// The writer's journal, set once by `Store` before the loops start.
final class JournalAheadSlot: Sendable {
    private let slot = Mutex<JournalAhead?>(nil)
    var current: JournalAhead? {
        get { slot.withLock { $0 } }
        set { slot.withLock { $0 = newValue } }
    }
}

extension StoreWriter {
    /// Appends `jobs` to the local journal and queues them for SQLite,
    /// returning their outcomes at once, if there is a journal, nothing
    /// journaled is waiting to be tried again and the writer is not far
    /// behind; nil otherwise (commit them another way). A failed append is
    /// nil too: the jobs then go the usual way and fail or commit there.
    public func journalIfIdle(_ jobs: [WriteJob]) -> [WriteOutcome]? {
        guard let ahead = ahead.current, !ahead.isStuck, queue.count <= JournalAhead.queueMax else { return nil }
        do { try ahead.append(jobs) } catch { return nil }
        return jobs.map { WriteOutcome(ticket: $0.ticket, error: nil, latencyMicros: 0) }
    }

    /// Starts the writer on the jobs `journalIfIdle` queued (the loop calls
    /// this once its turn's writes are out), if it sleeps or `gatherJobs`
    /// wait; a writer gathering takes fewer at its own next look.
    public func wakeForJournal() { queue.wakeIfAsleep(orHolding: JournalAhead.gatherJobs) }

    /// Commits each record SQLite lacks, in order, each with its position;
    /// throws at the first that fails for want of the disk (the journal
    /// keeps it for the next start). A record SQLite refuses as such is
    /// passed over (its position still moves) and returned, for the log.
    func replayJournal(_ records: [(seq: UInt64, writes: [StoreWrite])]) throws(StoreError) -> [StoreError] {
        let result = seat.whenFree { statements -> Result<[StoreError], StoreError> in
            var refused: [StoreError] = []
            for r in records {
                // As the writer commits a journaled job: its position written with it (`WriteJob.journalSeq`).
                guard let error = StoreWriter.attempt([WriteJob(ticket: 0, writes: r.writes, journalSeq: r.seq)], statements: statements) else { continue }
                guard !error.mayPassWhenTriedAgain else { return .failure(error) }
                refused.append(StoreError(code: error.code, message: "journal record \(r.seq): \(error.message)"))
                if let error = StoreWriter.attempt([WriteJob(ticket: 0, writes: [], journalSeq: r.seq)], statements: statements) { return .failure(error) }
            }
            return .success(refused)
        } ?? .failure(StoreError(code: -1, message: "the store is closed"))
        return try result.get()
    }
}

extension StoreError {
    /// Whether the same statement could pass later: SQLite failed for the
    /// disk, memory or a lock, not because of what was asked.
    var mayPassWhenTriedAgain: Bool {
        ![SQLITE_ERROR, SQLITE_CONSTRAINT, SQLITE_MISMATCH, SQLITE_TOOBIG, SQLITE_RANGE].contains(code & 0xff)
    }
}
