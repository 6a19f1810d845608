// The local journal ahead of SQLite (LocalJournal.swift, JournalAhead.swift):
// a journaled job is answered at once and read back at once, an open stores
// the records SQLite lacks exactly once, a torn tail is left out, and a job
// the disk refused waits, with everything after it, until the disk is back
// (reads going on without it meanwhile).

import CPowerLoss
import Foundation
import Testing
@testable import GuildhallCore
@testable import GuildhallStore

/// The tests' record format (the server's is its log format, tested with it).
let testCodec = JournalCodec(encode: { try Array(JSONEncoder().encode($0)) },
                             decode: { try JSONDecoder().decode([StoreWrite].self, from: Data($0)) })

func openJournaled(_ folder: String, _ reports: Reports, restartBytes: Int64 = LocalJournal.defaultRestartBytes,
                   gatherSeconds: Double = JournalAhead.defaultGatherSeconds) throws -> Store {
    var options = StoreOptions(folder: folder)
    options.journalGatherSeconds = gatherSeconds
    options.journalCodec = testCodec
    options.journalAhead = true
    options.journalRestartBytes = restartBytes
    return try Store(options, onCommitted: { o in reports.outcomes.withLock { $0 += o } },
                     onRead: { r in reports.reads.withLock { $0 += r } })
}

@Suite struct JournalTests {
    let server = ServerRecord(id: 1, name: "Guild", icon: "", custom: "{}", owner: "alice", openJoin: true, createdAt: 1)
    let channel = ChannelRecord(id: 10, serverID: 1, name: "general", topic: "", custom: "", createdAt: 2)
    var guild: [StoreWrite] { [.directory(.serverSaved(server)), .directory(.channelSaved(channel))] }

    func history(_ store: Store, _ reports: Reports, ticket: UInt64) -> ReadResult? {
        store.reader.submit(ticket: ticket, .history(channel: 10, anchor: 0, after: true, limit: 100))
        return reports.waitRead(ticket: ticket)
    }

    /// Journals `jobs` as a loop does, waking the writer as its turn ends.
    func journal(_ store: Store, _ jobs: [WriteJob]) -> [WriteOutcome]? {
        defer { store.writer.wakeForJournal() }
        return store.writer.journalIfIdle(jobs)
    }

    func outcome(_ ticket: UInt64, _ reports: Reports) -> WriteOutcome? { reports.waitOutcome(ticket: ticket) }

    /// Whether SQLite holds every record journaled so far, within `seconds`.
    func storedAll(_ ahead: JournalAhead, within seconds: Double = 5) -> Bool {
        Reports.poll(seconds) { ahead.lastStored >= ahead.lastAppended ? true : nil } ?? false
    }

    /// Whether the writer went to sleep until pushed, within 5 s.
    func writerAsleep(_ store: Store) -> Bool { Reports.poll(5) { store.writer.queue.isAsleep ? true : nil } ?? false }

    func journalSize(_ folder: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: folder + "/" + LocalJournal.file))?[.size] as? Int) ?? 0
    }

    /// A journaled store holding the guild and its first message, read back.
    func startedStore(_ folder: String, _ reports: Reports, restartBytes: Int64 = LocalJournal.defaultRestartBytes,
                      gatherSeconds: Double = JournalAhead.defaultGatherSeconds) throws -> Store {
        let store = try openJournaled(folder, reports, restartBytes: restartBytes, gatherSeconds: gatherSeconds)
        _ = try #require(journal(store, [WriteJob(ticket: 1, writes: guild + [.message(message(seq: 1))])]))
        #expect(history(store, reports, ticket: 1)?.messages.count == 1)
        return store
    }

    @Test func aJournaledJobIsAnsweredAtOnceAndReadBackAtOnce() throws {
        let folder = temporaryFolder()
        let reports = Reports()
        let store = try openJournaled(folder, reports)
        defer { store.close() }
        for seq in 1...50 {
            let writes = (seq == 1 ? guild : []) + [.message(message(seq: UInt64(seq)))]
            let outcomes = try #require(journal(store, [WriteJob(ticket: UInt64(seq), writes: writes)]))
            #expect(outcomes.map(\.ticket) == [UInt64(seq)] && outcomes[0].error == nil)
            // Asked right after the answer: the read waits for SQLite to hold it.
            #expect(history(store, reports, ticket: UInt64(seq))?.messages.map(\.seq) == Array(1...UInt64(seq)))
        }
        let size = journalSize(folder)
        #expect(size > 50 * LocalJournal.headerBytes)
    }

    /// A read asked while the writer has not yet stored what was answered
    /// (journaled as a loop's turn does before its writes are out, so the
    /// writer was not woken) wakes the writer, and is answered with the
    /// record as soon as the writer stores it, not after the wait's end.
    @Test func aReadAskedBeforeSQLiteHoldsTheAnswerWakesTheWriterAndWaitsForIt() throws {
        let folder = temporaryFolder()
        let reports = Reports()
        let store = try openJournaled(folder, reports)
        defer { store.close() }
        let outcomes = try #require(store.writer.journalIfIdle([WriteJob(ticket: 1, writes: guild + [.message(message(seq: 1))])]))
        #expect(outcomes.map { $0.error == nil } == [true])
        let asked = Date()
        store.reader.submit(ticket: 2, .history(channel: 10, anchor: 0, after: true, limit: 100))
        let read = try #require(reports.waitRead(ticket: 2))
        #expect(read.error == nil && read.messages.map(\.seq) == [1])
        #expect(Date().timeIntervalSince(asked) < JournalAhead.readWaitSeconds / 2, "woken with the store, not at the wait's end")
    }

    /// A writer that just stored journaled jobs gathers the next ones
    /// without being woken for each: they reach SQLite by its own timer.
    /// Asleep, it is woken by the loop's `wakeForJournal`. (Gathering for
    /// half a second here, so that a loaded machine still journals the next
    /// job while it does.)
    @Test func aWriterGatheringStoresJournaledJobsWithoutAWakeUpEach() throws {
        let folder = temporaryFolder()
        let reports = Reports()
        let gather = 0.5
        let store = try startedStore(folder, reports, gatherSeconds: gather)
        defer { store.close() }
        let ahead = try #require(store.writer.ahead.current)
        // Asleep (no read about to nudge it): woken by the turn's end, it stores and gathers.
        #expect(writerAsleep(store))
        _ = try #require(journal(store, [WriteJob(ticket: 2, writes: [.message(message(seq: 2))])]))
        #expect(storedAll(ahead))
        // Journaled without a wake-up while it gathers: stored all the same.
        _ = try #require(store.writer.journalIfIdle([WriteJob(ticket: 3, writes: [.message(message(seq: 3))])]))
        #expect(storedAll(ahead))
        // Once it sleeps again, a job journaled without a wake-up stays out
        // of SQLite (for twice the gathering wait) until the turn's end wakes it.
        #expect(writerAsleep(store))
        _ = try #require(store.writer.journalIfIdle([WriteJob(ticket: 4, writes: [.message(message(seq: 4))])]))
        #expect(!storedAll(ahead, within: gather * 2), "a sleeping writer woke without being woken")
        store.writer.wakeForJournal()
        #expect(storedAll(ahead))
        #expect(history(store, reports, ticket: 5)?.messages.map(\.seq) == [1, 2, 3, 4])
    }

    /// A gathering writer is woken at a turn's end once `gatherJobs` wait:
    /// a few sends share a transaction, committed right after the turn.
    @Test func aWriterGatheringIsWokenWhenEnoughJobsWait() throws {
        let folder = temporaryFolder()
        let reports = Reports()
        let store = try openJournaled(folder, reports, gatherSeconds: 30)
        defer { store.close() }
        let ahead = try #require(store.writer.ahead.current)
        // Woken while asleep, it stores the first job and gathers (30 s here).
        _ = try #require(journal(store, [WriteJob(ticket: 1, writes: guild + [.message(message(seq: 1))])]))
        #expect(storedAll(ahead))
        // Fewer: left to the gathering, turn after turn.
        for seq in 2..<UInt64(1 + JournalAhead.gatherJobs) {
            _ = try #require(journal(store, [WriteJob(ticket: seq, writes: [.message(message(seq: seq))])]))
        }
        #expect(!storedAll(ahead, within: 0.2))
        // Enough: the turn's end wakes it.
        let next = UInt64(1 + JournalAhead.gatherJobs)
        _ = try #require(journal(store, [WriteJob(ticket: next, writes: [.message(message(seq: next))])]))
        #expect(storedAll(ahead), "woken when gatherJobs waited, not at the gathering's end")
    }

    /// Past its size the file starts over once SQLite holds all of it, and
    /// what it held is stored once: a reopen finds nothing to store again.
    @Test func aLongJournalStartsOverOnceSQLiteHoldsIt() throws {
        let folder = temporaryFolder()
        let reports = Reports()
        var store = try openJournaled(folder, reports, restartBytes: 2048)
        for seq in 1...100 {
            let writes = (seq == 1 ? guild : []) + [.message(message(seq: UInt64(seq), text: String(repeating: "j", count: 100)))]
            _ = try #require(journal(store, [WriteJob(ticket: UInt64(seq), writes: writes)]))
            // A read every third record lets SQLite catch up before the file reaches twice its size.
            if seq % 3 == 0 { #expect(history(store, reports, ticket: UInt64(seq))?.messages.count == seq) }
        }
        let size = journalSize(folder)
        #expect(size < 4096 + 2048, "\(size) bytes after 100 records of about 300")
        #expect(try LocalJournal(folder: folder).records().first.map { $0.seq > 1 } == true)
        store.close()
        store = try openJournaled(folder, Reports())
        defer { store.close() }
        #expect(store.journalReplay.stored == 0 && store.journalReplay.refused.isEmpty)
        #expect(try store.loadSnapshot(clientIDFloorUID: 0).channels.first?.lastSeq == 100)
    }

    /// With SQLite behind it (the writer kept from committing), the journal
    /// grows to twice its restart size and no further: the next turns commit
    /// the usual way until SQLite has caught up, then it starts over.
    @Test func aJournalSQLiteLagsBehindStopsAtTwiceItsSize() throws {
        let folder = temporaryFolder()
        let reports = Reports()
        let store = try startedStore(folder, reports, restartBytes: 1024)
        defer { store.close() }
        let refusedAt = store.writer.seat.whenFree { _ -> UInt64? in
            for seq in UInt64(2)...40 where journal(store, [WriteJob(ticket: seq, writes: [.message(message(seq: seq, text: String(repeating: "j", count: 100)))])]) == nil {
                return seq
            }
            return nil
        }
        let refused = try #require(refusedAt ?? nil)
        let size = journalSize(folder)
        #expect(refused > 3 && size >= 2048 && size < 2048 + 1024, "refused at \(refused), \(size) bytes")
        // The refused one goes the usual way; once SQLite holds everything the journal starts over.
        store.writer.submit(WriteJob(ticket: refused, writes: [.message(message(seq: refused))]))
        #expect(outcome(refused, reports)?.error == nil)
        _ = try #require(journal(store, [WriteJob(ticket: 100, writes: [.message(message(seq: refused + 1))])]))
        #expect(history(store, reports, ticket: 2)?.messages.count == Int(refused) + 1)
        #expect(try LocalJournal(folder: folder).records().count == 1)
    }

    @Test func anOpenStoresWhatSQLiteLacksOnceAndStartsTheJournalOver() throws {
        let folder = temporaryFolder()
        try openJournaled(folder, Reports()).close()
        // What a crash leaves: records appended and answered, not yet in SQLite.
        do {
            let journal = try LocalJournal(folder: folder)
            let jobs: [[StoreWrite]] = [guild] + (1...20).map { [.message(message(seq: UInt64($0)))] }
            try journal.append(try jobs.map { try testCodec.encode($0) }, held: 0) { #expect($0 == 1) }
        }
        let reports = Reports()
        let store = try openJournaled(folder, reports)
        #expect(store.journalReplay.stored == 21 && store.journalReplay.refused.isEmpty)
        #expect(history(store, reports, ticket: 1)?.messages.map(\.seq) == Array(1...20))
        // The next record follows the replayed ones, and the file holds only it.
        _ = try #require(journal(store, [WriteJob(ticket: 1, writes: [.message(message(seq: 21))])]))
        #expect(try LocalJournal(folder: folder).records().map(\.seq) == [22])
        store.close()
        // SQLite now holds all of it: nothing is stored twice (a message twice would be refused).
        let again = try openJournaled(folder, Reports())
        defer { again.close() }
        #expect(again.journalReplay.stored == 0 && again.journalReplay.refused.isEmpty)
        #expect(try again.loadSnapshot(clientIDFloorUID: 0).channels.first?.lastSeq == 21)
    }

    /// A power loss took SQLite's unsynced tail and the journal kept later
    /// records: storing them would leave a hole, so they are left out and said.
    @Test func recordsPastAGapAfterWhatSQLiteHoldsAreNotStored() throws {
        let folder = temporaryFolder()
        let reports = Reports()
        var store = try startedStore(folder, reports)
        store.close()
        // Records 2 and 3 follow record 1, which SQLite holds: both are stored.
        do {
            let journal = try LocalJournal(folder: folder)
            try journal.startOver(after: 1)
            try journal.append([try testCodec.encode([.message(message(seq: 2))]), try testCodec.encode([.message(message(seq: 3))])],
                               held: 0) { #expect($0 == 2) }
        }
        store = try openJournaled(folder, Reports())
        #expect(store.journalReplay.stored == 2)
        store.close()
        // Record 6 follows a gap (SQLite holds 3; 4 and 5 are gone): it is not stored.
        do {
            let journal = try LocalJournal(folder: folder)
            try journal.startOver(after: 5)
            try journal.append([try testCodec.encode([.message(message(seq: 9))])], held: 0) { #expect($0 == 6) }
        }
        store = try openJournaled(folder, Reports())
        defer { store.close() }
        #expect(store.journalReplay.stored == 0 && store.journalReplay.refused.count == 1)
        #expect(try store.loadSnapshot(clientIDFloorUID: 0).channels.first?.lastSeq == 3)
        // And the journal goes on after what SQLite holds.
        _ = try #require(journal(store, [WriteJob(ticket: 2, writes: [.message(message(seq: 4))])]))
        #expect(try LocalJournal(folder: folder).records().map(\.seq) == [4])
    }

    @Test func aTornOrStaleTailEndsTheRecords() throws {
        var bytes: [UInt8] = []
        for seq in 1...3 { LocalJournal.record(seq: UInt64(seq), payload: Array("job \(seq)".utf8), into: &bytes) }
        let whole = bytes.count
        LocalJournal.record(seq: 4, payload: Array("job 4".utf8), into: &bytes)
        #expect(LocalJournal.parse(bytes).map(\.seq) == [1, 2, 3, 4])
        // Cut anywhere inside the fourth record: the first three stand.
        for cut in whole..<bytes.count { #expect(LocalJournal.parse(Array(bytes[..<cut])).map(\.seq) == [1, 2, 3]) }
        // A flipped byte in it, or a record that does not follow the one before.
        var flipped = bytes
        flipped[bytes.count - 1] ^= 1
        #expect(LocalJournal.parse(flipped).map(\.seq) == [1, 2, 3])
        var stale = Array(bytes[..<whole])
        LocalJournal.record(seq: 2, payload: Array("old".utf8), into: &stale)
        #expect(LocalJournal.parse(stale).map(\.seq) == [1, 2, 3])
        var skipping = Array(bytes[..<whole])
        LocalJournal.record(seq: 5, payload: Array("job 5".utf8), into: &skipping)
        #expect(LocalJournal.parse(skipping).map(\.seq) == [1, 2, 3])
        #expect(LocalJournal.parse(Array(bytes[..<whole])).map { String(decoding: $0.payload, as: UTF8.self) } == ["job 1", "job 2", "job 3"])
    }

    @Test func aJobTheDiskRefusedWaitsWithWhatFollowsUntilTheDiskIsBack() throws {
        #expect(powerloss_install() == 0)
        let folder = temporaryFolder()
        let reports = Reports()
        let store = try startedStore(folder, reports)
        defer { store.close() }
        // Journaled while the writer cannot start on it, then the disk fills.
        let journaled = store.writer.seat.whenFree { _ in
            defer { powerloss_full(folder) }
            return journal(store, [WriteJob(ticket: 2, writes: [.message(message(seq: 2))])])
        }
        #expect(journaled??.first?.error == nil && journaled??.count == 1)
        var refilled = false
        defer { if !refilled { powerloss_room(folder) } }
        // A job after it fails (the disk is full), nothing more is journaled meanwhile.
        store.writer.submit(WriteJob(ticket: 3, writes: [.message(message(seq: 3))]))
        #expect(outcome(3, reports)?.error != nil)
        #expect(journal(store, [WriteJob(ticket: 4, writes: [.message(message(seq: 3))])]) == nil)
        // Nor does a caller's own commit pass it.
        #expect(store.writer.commitIfIdle([WriteJob(ticket: 4, writes: [.message(message(seq: 3))])]) == nil)
        // Reads meanwhile go on without it (they do not fail for want of the disk).
        let meanwhile = history(store, reports, ticket: 2)
        #expect(meanwhile?.error == nil && meanwhile?.messages.map(\.seq) == [1])
        // Once the disk is back, the held job reaches SQLite first, then the next.
        powerloss_room(folder)
        refilled = true
        store.writer.submit(WriteJob(ticket: 5, writes: [.message(message(seq: 3))]))
        #expect(outcome(5, reports) != nil && outcome(5, reports)?.error == nil)
        #expect(history(store, reports, ticket: 3)?.messages.map(\.seq) == [1, 2, 3])
        #expect(journal(store, [WriteJob(ticket: 6, writes: [.message(message(seq: 4))])]) != nil)
    }

    @Test func aJournaledJobSQLiteRefusesAsSuchFailsAloneAndTheNextOnesPass() throws {
        let folder = temporaryFolder()
        let reports = Reports()
        let store = try openJournaled(folder, reports)
        defer { store.close() }
        _ = try #require(journal(store, [WriteJob(ticket: 1, writes: guild + [.message(message(seq: 1))])]))
        // The same (channel, seq) again: a constraint SQLite will never let pass.
        _ = try #require(journal(store, [WriteJob(ticket: 2, writes: [.message(message(seq: 1, uid: 9_999))])]))
        #expect(outcome(2, reports)?.error != nil)
        // A read asked after it does not wait for it (it would fail, waiting too long).
        let first = history(store, reports, ticket: 1)
        #expect(first?.error == nil && first?.messages.map(\.uid) == [1_001])
        _ = try #require(journal(store, [WriteJob(ticket: 3, writes: [.message(message(seq: 2))])]))
        #expect(history(store, reports, ticket: 2)?.messages.map(\.seq) == [1, 2])
        #expect(journal(store, [WriteJob(ticket: 4, writes: [.message(message(seq: 3))])]) != nil)
    }
}
