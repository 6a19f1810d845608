// The store on a temporary database: acknowledged writes survive a reopen,
// a failed batch does not take the next one down, history pages correctly.

import Foundation
import Synchronization
import Testing
@testable import GuildhallCore
@testable import GuildhallStore

/// Collects what the store threads report, for tests to wait on with a deadline.
final class Reports: Sendable {
    let outcomes = Mutex<[WriteOutcome]>([])
    let reads = Mutex<[ReadResult]>([])

    func waitOutcomes(_ n: Int, timeout: Double = 10) -> [WriteOutcome] {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let got = outcomes.withLock { $0 }
            if got.count >= n { return got }
            usleep(2_000)
        }
        return outcomes.withLock { $0 }
    }

    /// The writer's report on `ticket`, waited for with a deadline.
    func waitOutcome(ticket: UInt64, timeout: Double = 10) -> WriteOutcome? {
        Self.poll(timeout) { outcomes.withLock { $0.first { $0.ticket == ticket } } }
    }

    func waitRead(ticket: UInt64, timeout: Double = 10) -> ReadResult? {
        Self.poll(timeout) { reads.withLock { $0.first { $0.ticket == ticket } } }
    }

    /// What `find` finds within `timeout` seconds, asked every 2 ms.
    static func poll<T>(_ timeout: Double, _ find: () -> T?) -> T? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let found = find() { return found }
            usleep(2_000)
        }
        return nil
    }
}

func temporaryFolder() -> String {
    let path = NSTemporaryDirectory() + "guildhall-store-\(UUID().uuidString)"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// The names of this process's threads, as the kernel shows them.
func threadNames() -> Set<String> {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return Set(tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
        .map { $0.trimmingCharacters(in: .newlines) })
}

func openStore(_ folder: String, _ reports: Reports) throws -> Store {
    try Store(StoreOptions(folder: folder), onCommitted: { o in reports.outcomes.withLock { $0 += o } },
              onRead: { r in reports.reads.withLock { $0 += r } })
}

func message(seq: UInt64, channel: ChannelID = 10, uid: UInt64? = nil, text: String = "m") -> MessageRecord {
    MessageRecord(uid: uid ?? (1_000 + seq), serverID: 1, channelID: channel, seq: seq, sender: "alice", sentTime: 5_000 + seq,
                  content: .text(text), mentions: ["bob"], mentionAll: false, needReceipt: false, clientID: "c\(seq)")
}

@Suite struct StoreTests {
    let server = ServerRecord(id: 1, name: "Guild", icon: "", custom: "{}", owner: "alice", openJoin: true, createdAt: 1)
    let channel = ChannelRecord(id: 10, serverID: 1, name: "general", topic: "", custom: "", createdAt: 2)

    @Test func everyAcknowledgedMessageIsThereAfterReopening() throws {
        let folder = temporaryFolder()
        let reports = Reports()
        let store = try openStore(folder, reports)
        store.writer.submit(WriteJob(ticket: 0, writes: [.directory(.serverSaved(server)), .directory(.channelSaved(channel)),
                                                          .directory(.memberSaved(MemberRecord(serverID: 1, userID: "alice", role: .owner, joinedAt: 1)))]))
        for seq in 1...500 { store.writer.submit(WriteJob(ticket: UInt64(seq), writes: [.message(message(seq: UInt64(seq)))])) }
        let outcomes = reports.waitOutcomes(501)
        let acknowledged = outcomes.filter { $0.error == nil }.map(\.ticket)
        #expect(acknowledged.count == 501)
        store.close()

        let reopened = try openStore(folder, Reports())
        defer { reopened.close() }
        let snapshot = try reopened.loadSnapshot(clientIDFloorUID: 0)
        #expect(snapshot.servers == [server])
        #expect(snapshot.members.count == 1)
        #expect(snapshot.channels.first?.lastSeq == 500)
        #expect(snapshot.channels.first?.lastMessageTime == 5_500)
        #expect(snapshot.highestID == 1_500)
        #expect(snapshot.recentClientSends.count == 500)
        let first = message(seq: 1)
        #expect(snapshot.recentClientSends.first.map { [String($0.uid), $0.sender, $0.clientID] } == [String(first.uid), first.sender, first.clientID])
    }

    /// An operator's `top -H` or perf tells the store's threads apart: each
    /// carries its own name, not that of the thread that started it.
    @Test func theStoresThreadsCarryTheirNames() throws {
        let store = try openStore(temporaryFolder(), Reports())
        defer { store.close() }
        let wanted: Set<String> = ["gh-writer", "gh-reader", "gh-checkpoint"]
        let named = Reports.poll(5) { wanted.isSubset(of: threadNames()) ? true : nil }
        #expect(named == true, "threads: \(threadNames().sorted())")
    }

    /// Two marks decided together may commit in either order; the stored position keeps the higher.
    @Test func aStoredReadPositionNeverGoesBack() throws {
        let folder = temporaryFolder()
        let reports = Reports()
        let store = try openStore(folder, reports)
        store.writer.submit(WriteJob(ticket: 1, writes: [.readPosition("alice", 10, ReadPosition(readSeq: 9, ackTime: 90, activity: 95))]))
        store.writer.submit(WriteJob(ticket: 2, writes: [.readPosition("alice", 10, ReadPosition(readSeq: 4, ackTime: 40, activity: 99))]))
        store.writer.submit(WriteJob(ticket: 3, writes: [.readPosition("bob", 10, ReadPosition(readSeq: 2, ackTime: 20, activity: 20))]))
        store.writer.submit(WriteJob(ticket: 4, writes: [.readPosition("bob", 10, ReadPosition(readSeq: 3, ackTime: 30, activity: 30))]))
        #expect(reports.waitOutcomes(4).allSatisfy { $0.error == nil })
        store.close()
        let reopened = try openStore(folder, Reports())
        defer { reopened.close() }
        let positions = try reopened.loadSnapshot(clientIDFloorUID: 0).readPositions.sorted { $0.0 < $1.0 }
        #expect(positions.map(\.2) == [ReadPosition(readSeq: 9, ackTime: 90, activity: 99), ReadPosition(readSeq: 3, ackTime: 30, activity: 30)])
    }

    @Test func aBatchFollowingAFailedOneStillCommits() throws {
        let folder = temporaryFolder()
        let reports = Reports()
        let store = try openStore(folder, reports)
        defer { store.close() }
        store.writer.submit(WriteJob(ticket: 1, writes: [.message(message(seq: 1))]))
        _ = reports.waitOutcomes(1)
        // Ticket 2 repeats (channel, seq) 1 and must fail; 3 and 4 come right after it.
        store.writer.submit(WriteJob(ticket: 2, writes: [.message(message(seq: 1, uid: 9_999))]))
        store.writer.submit(WriteJob(ticket: 3, writes: [.message(message(seq: 2))]))
        store.writer.submit(WriteJob(ticket: 4, writes: [.message(message(seq: 3))]))
        let outcomes = reports.waitOutcomes(4)
        #expect(outcomes.first { $0.ticket == 2 }?.error != nil)
        #expect(outcomes.filter { $0.ticket != 2 }.allSatisfy { $0.error == nil })
        // And a later batch commits as well.
        store.writer.submit(WriteJob(ticket: 5, writes: [.message(message(seq: 4))]))
        #expect(reports.waitOutcomes(5).first { $0.ticket == 5 }?.error == nil)
        store.reader.submit(ticket: 1, .history(channel: 10, anchor: 0, after: true, limit: 10))
        #expect(reports.waitRead(ticket: 1)?.messages.map(\.seq) == [1, 2, 3, 4])
    }

    /// A transaction holds at most `maxBatch` writes, whatever the jobs: a
    /// job may hold a run of sends. A job larger than that goes alone.
    @Test func aTransactionEndsAtTheJobThatWouldTakeItPastTheMostWrites() {
        let sizes = [3, 3, 1, 3, 10, 1, 1]
        let jobs = sizes.enumerated().map { i, n in
            (WriteJob(ticket: UInt64(i), writes: (0..<n).map { .message(message(seq: UInt64(i * 100 + $0))) }), UInt64(0))
        }
        var ends: [Int] = [], index = 0
        while index < jobs.count {
            index = StoreWriter.batchEnd(jobs, from: index, maxWrites: 6)
            ends.append(index)
        }
        #expect(ends == [2, 4, 5, 7])
        #expect(StoreWriter.batchEnd(jobs, from: 0, maxWrites: 1) == 1)
    }

    /// Waits (with a deadline) for the writer to be idle and commits `jobs` on this thread.
    func commitWhenIdle(_ store: Store, _ jobs: [WriteJob]) -> [WriteOutcome]? {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if let outcomes = store.writer.commitIfIdle(jobs) { return outcomes }
            usleep(1_000)
        }
        return nil
    }

    /// The loop's own commits (writer idle) and the writer's, mixed: every
    /// job commits once and a failing one fails alone, inline too.
    @Test func commitsOnTheCallersThreadMixWithTheWritersAndLoseNothing() throws {
        let folder = temporaryFolder()
        let reports = Reports()
        let store = try openStore(folder, reports)
        defer { store.close() }
        func job(_ seq: Int) -> WriteJob { WriteJob(ticket: UInt64(seq), writes: [.message(message(seq: UInt64(seq)))]) }
        for seq in 1...100 { store.writer.submit(job(seq)) }
        #expect(reports.waitOutcomes(100).count == 100)
        for seq in 101...150 {
            let outcomes = try #require(commitWhenIdle(store, [job(seq)]))
            #expect(outcomes.map(\.ticket) == [UInt64(seq)] && outcomes[0].error == nil)
        }
        // Mixed: whichever way each goes, it commits once.
        var submitted = 100
        for seq in 151...300 {
            if seq % 2 == 0, let outcomes = store.writer.commitIfIdle([job(seq)]) {
                #expect(outcomes[0].error == nil)
            } else {
                store.writer.submit(job(seq))
                submitted += 1
            }
        }
        #expect(reports.waitOutcomes(submitted).count == submitted)
        let failing = WriteJob(ticket: 1_000, writes: [.message(message(seq: 1, uid: 9_999))])  // (channel, seq) taken
        let outcomes = try #require(commitWhenIdle(store, [failing, job(301)]))
        #expect(outcomes.map(\.ticket) == [1_000, 301])
        #expect(outcomes[0].error != nil && outcomes[1].error == nil)
        store.reader.submit(ticket: 1, .history(channel: 10, anchor: 0, after: true, limit: 400))
        #expect(reports.waitRead(ticket: 1)?.messages.map(\.seq) == Array(1...301))
    }

    /// Commits land in the WAL; the checkpoint thread copies them into the
    /// database file while the store is open (SQLite's own checkpoint waits
    /// for 10,000 pages, far more than this test writes).
    @Test func theCheckpointThreadCopiesCommittedPagesIntoTheDatabaseFile() throws {
        let folder = temporaryFolder()
        let reports = Reports()
        let store = try Store(StoreOptions(folder: folder, checkpointMillis: 20), onCommitted: { o in reports.outcomes.withLock { $0 += o } },
                              onRead: { _ in })
        defer { store.close() }
        func size(_ name: String) -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: folder + "/" + name))?[.size] as? NSNumber)?.intValue ?? 0
        }
        let before = size("guildhall.db")
        for seq in 1...300 {
            store.writer.submit(WriteJob(ticket: UInt64(seq), writes: [.message(message(seq: UInt64(seq), text: String(repeating: "x", count: 500)))]))
        }
        #expect(reports.waitOutcomes(300).count == 300)
        let deadline = Date().addingTimeInterval(10)
        while size("guildhall.db") < before + 150_000 && Date() < deadline { usleep(5_000) }
        #expect(size("guildhall.db") >= before + 150_000, "database file \(size("guildhall.db")) bytes, was \(before)")
    }

    /// Under commits that never pause, the checkpoint thread starts the WAL
    /// over (its header's checkpoint sequence rises) long before SQLite's own
    /// backstop at 10,000 pages, so the WAL stays short; nothing is lost.
    /// One message per transaction, all queued at once, each commit flushed
    /// (FULL): no copy of the WAL finds the writer between commits, at a
    /// pace like sustained sends'. (No search index here: its reads, like
    /// any reader's, can hold a restart back for a round.)
    @Test func aWALThatCommitsKeepGrowingStartsOverFromItsBeginning() throws {
        let w = try WALWatch(synchronous: "FULL", maxBatch: 1)
        for seq in 1...WALWatch.count { w.store.writer.submit(w.job(seq)) }
        #expect(w.reports.waitOutcomes(Int(WALWatch.count), timeout: 60).allSatisfy { $0.error == nil })
        w.expectStartedOver()
        w.store.close()
        let db = try SQLiteConnection(path: w.folder + "/guildhall.db", readOnly: true)
        #expect(try db.scalar("SELECT count(*) FROM messages") == Int64(WALWatch.count))
    }

    /// A quiet server commits on its loop (`commitIfIdle`) and its writer
    /// thread may never run: the WAL still starts over once long, the writer
    /// woken to do it, rather than growing to the backstop where the loop's
    /// own commit would copy and fsync.
    @Test func aWALOfCommitsMadeOnTheLoopAloneStartsOverToo() throws {
        let w = try WALWatch(synchronous: "NORMAL", maxBatch: 512)
        var inline = 0
        // Paced as a quiet server's sends are (thousands a second, not as fast as SQLite goes).
        for seq in 1...WALWatch.count {
            Thread.sleep(forTimeInterval: 0.000_3)
            // As a loop does: itself while the writer is idle, else through the writer.
            if let outcomes = w.store.writer.commitIfIdle([w.job(seq)]) {
                #expect(outcomes.allSatisfy { $0.error == nil })
                inline += 1
            } else {
                w.store.writer.submit(w.job(seq))
            }
        }
        #expect(w.reports.waitOutcomes(Int(WALWatch.count) - inline, timeout: 60).allSatisfy { $0.error == nil })
        #expect(inline > Int(WALWatch.count) / 2, "most committed inline: \(inline)")
        w.expectStartedOver()
        w.store.close()
    }

    /// A store whose WAL should start over after 64 pages (no search index:
    /// its reads, like any reader's, can hold a restart back for a round), and
    /// what its WAL file says.
    private struct WALWatch {
        /// Some 2.5 frames a commit: about 30 MB of WAL were it never started over.
        static let count: UInt64 = 3_000
        let folder = temporaryFolder()
        let reports = Reports()
        let store: Store
        let first: UInt32
        private let text = String(repeating: "x", count: 2_000)

        init(synchronous: String, maxBatch: Int) throws {
            var options = StoreOptions(folder: folder, synchronous: synchronous, maxBatch: maxBatch, checkpointMillis: 10)
            options.walRestartPages = 64
            options.searchIndex = false
            let reports = reports
            store = try Store(options, onCommitted: { o in reports.outcomes.withLock { $0 += o } }, onRead: { _ in })
            first = Self.restarts(folder + "/guildhall.db-wal")
        }

        func job(_ seq: UInt64) -> WriteJob { WriteJob(ticket: seq, writes: [.message(message(seq: seq, text: text))]) }

        /// The WAL header's checkpoint sequence (big-endian at byte 12): one more at each restart.
        static func restarts(_ wal: String) -> UInt32 {
            guard let h = FileManager.default.contents(atPath: wal), h.count >= 16 else { return 0 }
            return h[12..<16].reduce(0) { $0 << 8 | UInt32($1) }
        }

        func expectStartedOver() {
            let wal = folder + "/guildhall.db-wal"
            let walBytes = ((try? FileManager.default.attributesOfItem(atPath: wal))?[.size] as? NSNumber)?.intValue ?? 0
            let restarts = Self.restarts(wal)
            #expect(restarts >= first + 3, "the WAL started over \(restarts - first) times")
            #expect(walBytes < 10_000_000, "WAL \(walBytes) bytes")
        }
    }

    /// The leak check's count: a statement stepped and not finished is busy (it holds a read
    /// transaction open); a store that served writes and reads closes with none.
    @Test func busyStatementsAreCountedAndAStoreClosesWithNone() throws {
        let folder = temporaryFolder()
        let reports = Reports()
        let store = try openStore(folder, reports)
        for seq in 1...3 { store.writer.submit(WriteJob(ticket: UInt64(seq), writes: [.message(message(seq: UInt64(seq)))])) }
        #expect(reports.waitOutcomes(3).count == 3)
        #expect(store.close() == 0)
        let db = try SQLiteConnection(path: folder + "/guildhall.db", readOnly: true)
        let rows = try db.prepare("SELECT uid FROM messages", persistent: false)
        #expect(db.busyStatements == 0)
        #expect(try rows.step())
        #expect(db.busyStatements == 1, "stepped, not finished")
        while try rows.step() {}
        #expect(db.busyStatements == 0)
    }

    /// `close()` returns with every connection closed: the last one to close
    /// folds the WAL into the database and removes it, so a backup taken
    /// right after sees one complete file.
    @Test func closingLeavesTheDatabaseClosed() throws {
        for round in 1...5 {
            let folder = temporaryFolder()
            let reports = Reports()
            let store = try openStore(folder, reports)
            store.writer.submit(WriteJob(ticket: 1, writes: [.message(message(seq: UInt64(round)))]))
            #expect(reports.waitOutcomes(1).count == 1)
            store.close()
            #expect(!FileManager.default.fileExists(atPath: folder + "/guildhall.db-wal"), "round \(round)")
        }
    }

    @Test func aJobIsAtomic() throws {
        let folder = temporaryFolder()
        let reports = Reports()
        let store = try openStore(folder, reports)
        store.writer.submit(WriteJob(ticket: 1, writes: [.message(message(seq: 1))]))
        // The second write of this job conflicts, so its first write must not stay either.
        store.writer.submit(WriteJob(ticket: 2, writes: [.message(message(seq: 2)), .message(message(seq: 1, uid: 7))]))
        let outcomes = reports.waitOutcomes(2)
        #expect(outcomes.first { $0.ticket == 2 }?.error != nil)
        store.close()
        let snapshot = try openStore(folder, Reports()).loadSnapshot(clientIDFloorUID: 0)
        #expect(snapshot.highestID == 1_001)
    }

    @Test func historyPagesBeforeAndAfterASeq() throws {
        let reports = Reports()
        let store = try openStore(temporaryFolder(), reports)
        defer { store.close() }
        for seq in 1...25 { store.writer.submit(WriteJob(ticket: UInt64(seq), writes: [.message(message(seq: UInt64(seq)))])) }
        store.writer.submit(WriteJob(ticket: 99, writes: [.message(message(seq: 1, channel: 11, uid: 5_000))]))
        _ = reports.waitOutcomes(26)
        store.reader.submit(ticket: 1, .history(channel: 10, anchor: 0, after: false, limit: 10))
        store.reader.submit(ticket: 2, .history(channel: 10, anchor: 16, after: false, limit: 10))
        store.reader.submit(ticket: 3, .history(channel: 10, anchor: 20, after: true, limit: 10))
        store.reader.submit(ticket: 4, .messages(uids: [1_003, 42, 1_001]))
        let newest = try #require(reports.waitRead(ticket: 1))
        #expect(newest.messages.map(\.seq) == Array(16...25))
        #expect(newest.hasMore)
        let older = try #require(reports.waitRead(ticket: 2))
        #expect(older.messages.map(\.seq) == Array(6...15))
        let newer = try #require(reports.waitRead(ticket: 3))
        #expect(newer.messages.map(\.seq) == Array(21...25))
        #expect(!newer.hasMore)
        #expect(reports.waitRead(ticket: 4)?.messages.map(\.uid) == [1_003, 1_001])
    }

    @Test func migrationsRunOnceAndReopeningIsIdempotent() throws {
        let folder = temporaryFolder()
        try openStore(folder, Reports()).close()
        let store = try openStore(folder, Reports())
        defer { store.close() }
        let db = try SQLiteConnection(path: store.path, readOnly: true)
        #expect(try db.scalar("PRAGMA user_version") == Int64(Schema.migrations.count))
        let mode = try db.prepare("PRAGMA journal_mode", persistent: false)
        #expect(try mode.step() && mode.text(0) == "wal")
    }

    @Test func customBodiesAndMentionsRoundTrip() throws {
        let reports = Reports()
        let store = try openStore(temporaryFolder(), reports)
        defer { store.close() }
        var m = message(seq: 1)
        m.content = .custom(type: "image", data: [0, 1, 2, 255])
        m.mentions = ["bob", "carol"]
        m.mentionAll = true
        store.writer.submit(WriteJob(ticket: 1, writes: [.message(m)]))
        _ = reports.waitOutcomes(1)
        store.reader.submit(ticket: 7, .messages(uids: [m.uid]))
        #expect(reports.waitRead(ticket: 7)?.messages == [m])
    }

    /// Plain messages go in multi-row inserts (16, 8, 4, 2 rows, then one);
    /// every row lands with its own fields (their texts and bytes, bound in
    /// place, whatever their size), and a write after them in the
    /// same transaction (an edit, a thread's count, a reply's full insert)
    /// finds the rows it changes.
    @Test func manyPlainMessagesInOneTransactionLandWithTheWritesAfterThem() throws {
        let reports = Reports()
        let store = try openStore(temporaryFolder(), reports)
        defer { store.close() }
        var expected: [MessageRecord] = []
        var jobs: [WriteJob] = []
        for seq in UInt64(1)...39 {
            var m = message(seq: seq, text: "text \(seq)")
            if seq % 3 == 0 { m.content = .custom(type: "t\(seq)", data: [UInt8(seq), 0, 255]) }
            if seq % 4 == 0 { m.mentions = [] }
            if seq % 5 == 0 { m.mentions = ["bob", "carol"]; m.mentionAll = true; m.needReceipt = true }
            // Texts and bytes bound in place (BindArena): several to a 64 KiB block, one larger than a block.
            if seq % 7 == 0 { m.content = .text(String(repeating: "\(seq % 10)", count: 30_000)) }
            if seq == 11 { m.content = .custom(type: "large", data: (0..<100_000).map { UInt8(truncatingIfNeeded: $0) }) }
            expected.append(m)
            // Every job also files an inbox item and a log position, as a mention and a cluster's job do: neither cuts the run.
            var writes: [StoreWrite] = [.message(m), .inbox(InboxRow(ord: seq, user: "bob", at: 6_000, messageUID: m.uid)),
                                        .logPosition(shard: 0, seq: seq)]
            // Job 20 edits message 18, which waits for its insert with 17, 19 and 20 (16 went already).
            if seq == 20 { writes.append(.messageEdited(1_018, .text("edited"), time: 9_000, channel: 10)) }
            jobs.append(WriteJob(ticket: seq, writes: writes))
        }
        // A reply in the thread under message 34, which waits for its insert: a full insert and the root's count, between plain ones.
        var reply = message(seq: 40, text: "reply")
        reply.threadRoot = 1_034
        jobs.insert(WriteJob(ticket: 40, writes: [.message(reply), .threadReply(root: 1_034, time: reply.sentTime, channel: 10)]), at: 35)
        let outcomes = try #require(commitWhenIdle(store, jobs))
        #expect(outcomes.count == 40 && outcomes.allSatisfy { $0.error == nil })
        expected[17].content = .text("edited")
        expected[17].changes.editedTime = 9_000
        expected[17].changes.editCount = 1
        expected[33].changes.threadReplies = 1
        expected[33].changes.threadLastReply = reply.sentTime
        store.reader.submit(ticket: 1, .messages(uids: expected.map(\.uid) + [reply.uid]))
        let read = try #require(reports.waitRead(ticket: 1))
        #expect(read.messages == expected + [reply])
        store.reader.submit(ticket: 2, .inbox(user: "bob", device: "d", after: 0, upTo: 100, limit: 100))
        let inbox = try #require(reports.waitRead(ticket: 2)).inbox
        #expect(inbox.map(\.ord) == Array(1...39) && inbox.map { $0.message?.uid } == expected.map(\.uid))
        #expect(try store.logPositions() == [0: 39])
    }
}
