// The message search index in the store: kept with the messages, filled by
// its migration from a database that had none, searched only in the
// channels asked, and stopped at its deadline.

import Foundation
import Testing
@testable import GuildhallCore
@testable import GuildhallStore

@Suite struct SearchIndexTests {
    private func search(_ store: Store, _ reports: Reports, _ query: String, channels: [ChannelID] = [10], ticket: UInt64) throws -> ReadResult {
        let expression = try SearchQuery(query).expression
        store.reader.submit(ticket: ticket, .search(MessageSearch(expression: expression, channels: channels, limit: 10, viewer: "alice", deadlineMillis: 2000)))
        return try #require(reports.waitRead(ticket: ticket))
    }

    @Test func theMigrationIndexesWhatWasStoredBeforeIt() throws {
        let folder = temporaryFolder()
        let reports = Reports()
        var store = try openStore(folder, reports)
        let custom = MessageRecord(uid: 1_003, serverID: 1, channelID: 10, seq: 3, sender: "alice", sentTime: 5_003,
                                   content: .custom(type: "card", data: Array("harbour".utf8)), mentions: [], mentionAll: false, needReceipt: false, clientID: "")
        store.writer.submit(WriteJob(ticket: 1, writes: [.message(message(seq: 1, text: "the harbour at dawn")), .message(message(seq: 2, text: "港口的早晨")),
                                                         .message(custom), .message(message(seq: 4, text: "harbour lights")),
                                                         .messageRemoved(1_004, Removal(kind: .deleted, by: "alice", time: 6_000), channel: 10)]))
        #expect(reports.waitOutcomes(1).allSatisfy { $0.error == nil })
        _ = store.close()
        // As a database written before search existed: no index, one migration fewer.
        do {
            let db = try SQLiteConnection(path: folder + "/guildhall.db")
            try db.execute("DROP TABLE webhooks; ALTER TABLE messages DROP COLUMN webhook; DROP TABLE direct_privacy; DROP TABLE group_members; ALTER TABLE conversations DROP COLUMN name; ALTER TABLE conversations DROP COLUMN owner; ALTER TABLE conversations DROP COLUMN kind; DROP TABLE direct_blocks; ALTER TABLE messages DROP COLUMN withheld; DROP TABLE push_tokens; DROP TABLE profiles; ALTER TABLE members DROP COLUMN nickname; ALTER TABLE members DROP COLUMN display_name; ALTER TABLE members DROP COLUMN avatar; DROP TABLE audit_log; DROP TABLE pins; DROP TABLE timeouts; DROP TABLE invite_codes; ALTER TABLE bans DROP COLUMN expires_at; "
                           + "ALTER TABLE channels DROP COLUMN slow_mode; DROP TABLE presence; DROP TABLE search_queue; DROP TABLE search_state; DROP TABLE files; ALTER TABLE servers DROP COLUMN discoverable; "
                           + "ALTER TABLE messages DROP COLUMN attachments; PRAGMA user_version = 9")
        }
        for suffix in ["", "-wal", "-shm"] { unlink(folder + "/search.db" + suffix) }
        store = try openStore(folder, reports)
        defer { _ = store.close() }
        #expect(try search(store, reports, "harbour", ticket: 2).messages.map(\.uid) == [1_001])
        #expect(try search(store, reports, "港口", ticket: 3).messages.map(\.uid) == [1_002])
        #expect(try search(store, reports, "harbour", channels: [11], ticket: 4).messages.isEmpty, "only the channels asked")
        let hit = try search(store, reports, "dawn", ticket: 5)
        #expect(SearchText.snippetParts(hit.snippets[0]).map(\.text) == ["the harbour at ", "dawn"])
    }

    /// The index is written apart from the messages, from a queue: what a
    /// restart finds queued and not applied is applied, and an index ahead of
    /// the queue (a restored data folder) is built anew.
    @Test func theIndexCatchesUpWithTheQueueAndIsRebuiltWhenAheadOfIt() throws {
        let folder = temporaryFolder()
        let reports = Reports()
        var store = try openStore(folder, reports)
        store.writer.submit(WriteJob(ticket: 1, writes: [.message(message(seq: 1, text: "the harbour at dawn"))]))
        store.writer.submit(WriteJob(ticket: 2, writes: [.message(message(seq: 2, text: "harbour lights")),
                                                         .messageEdited(1_001, .text("the quay at dawn"), time: 6_000, channel: 10)]))
        #expect(reports.waitOutcomes(2).allSatisfy { $0.error == nil })
        // Searched at once: what was committed before the search is found.
        #expect(try search(store, reports, "harbour", ticket: 3).messages.map(\.uid) == [1_002])
        #expect(try search(store, reports, "quay", ticket: 4).messages.map(\.uid) == [1_001])
        _ = store.close()

        // As if the node stopped before the index applied the queue.
        do {
            let index = try SQLiteConnection(path: folder + "/search.db")
            try index.execute("DELETE FROM message_search; UPDATE progress SET queue_seq = 0")
        }
        store = try openStore(folder, reports)
        #expect(try search(store, reports, "harbour", ticket: 5).messages.map(\.uid) == [1_002])
        _ = store.close()

        // As if the data folder were restored from before the index's last rows.
        do {
            let index = try SQLiteConnection(path: folder + "/search.db")
            try index.execute("DELETE FROM message_search; UPDATE progress SET queue_seq = 1000000")
        }
        store = try openStore(folder, reports)
        #expect(try search(store, reports, "quay", ticket: 6).messages.map(\.uid) == [1_001])
        #expect(try search(store, reports, "harbour", ticket: 7).messages.map(\.uid) == [1_002])
        _ = store.close()

        // An index short of the oldest queue row left (rows it never applied were pruned): not this database's, built anew.
        do {
            let db = try SQLiteConnection(path: folder + "/guildhall.db")
            try db.execute("DELETE FROM search_queue WHERE seq <= 2")
            let index = try SQLiteConnection(path: folder + "/search.db")
            try index.execute("DELETE FROM message_search; UPDATE progress SET queue_seq = 0")
        }
        store = try openStore(folder, reports)
        defer { _ = store.close() }
        #expect(try search(store, reports, "harbour", ticket: 8).messages.map(\.uid) == [1_002])
    }

    @Test func aNewMessageWithoutWordsIsNeverQueuedForTheIndexButItsEditIs() throws {
        let folder = temporaryFolder()
        let reports = Reports()
        let store = try openStore(folder, reports)
        let custom = MessageRecord(uid: 1_002, serverID: 1, channelID: 10, seq: 2, sender: "alice", sentTime: 5_002,
                                   content: .custom(type: "card", data: Array("harbour".utf8)), mentions: [], mentionAll: false, needReceipt: false, clientID: "")
        store.writer.submit(WriteJob(ticket: 1, writes: [.message(message(seq: 1, text: "the harbour at dawn")), .message(custom)]))
        #expect(reports.waitOutcomes(1).allSatisfy { $0.error == nil })
        store.writer.submit(WriteJob(ticket: 2, writes: [.messageEdited(1_002, .text("harbour after all"), time: 6_000, channel: 10)]))
        let outcomes = reports.waitOutcomes(2)
        #expect(outcomes.count == 2 && outcomes.allSatisfy { $0.error == nil })
        #expect(try search(store, reports, "harbour", ticket: 3).messages.map(\.uid).sorted() == [1_001, 1_002])
        _ = store.close()
        let db = try SQLiteConnection(path: folder + "/guildhall.db")
        let queued = try db.prepare("SELECT uid FROM search_queue ORDER BY seq", persistent: false)
        var uids: [UInt64] = []
        while try queued.step() { uids.append(queued.uint(0)) }
        // (Applied rows are pruned only every 64 transactions: both are still there.)
        #expect(uids == [1_001, 1_002], "the text message and the edit, never the custom message as sent")
    }

    @Test func aStatementPastItsDeadlineIsInterrupted() throws {
        let db = try SQLiteConnection(path: ":memory:")
        let endless = try db.prepare("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n", persistent: false)
        let started = Date()
        db.interrupting(at: Deadline(afterMillis: 50))
        defer { db.interrupting(at: nil) }
        #expect(throws: StoreError.self) { _ = try endless.step() }
        do { _ = try endless.reset().step() } catch { #expect(error.interrupted) }
        #expect(Date().timeIntervalSince(started) < 10)
    }
}
