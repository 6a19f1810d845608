// The message search index (docs/features.md "Search"): FTS5 table
// `message_search` in a database file of its own, `search.db`, one row per
// message not removed that has words, rowid its uid: its text, and the names
// of the files it carries. It is written by a thread of its own
// (SearchIndexer), not by the store's writer, so that tokenizing words costs
// the writer nothing but one small row: the message's transaction adds its
// uid to `search_queue` in guildhall.db (a send, an edit, a recall or a
// delete alike), and the indexer reads the queue, reads each message as it
// now is, and puts it in the index or takes it out, recording the last
// queue seq it applied in search.db's `progress`. A search waits until the
// indexer has applied every queue row its own read can see, so it answers
// what was committed before it, as when the index was written with the
// message. The index is rebuilt from the messages when search.db is new,
// when the queue's sequence is behind what search.db says it applied (the
// data folder was restored), and after search was off (setting search-index).

import Foundation
import GuildhallCore

final class SearchIndex {
    static let file = "search.db"

    private let index: SQLiteConnection
    private let main: SQLiteConnection
    private let insert, remove, saveProgress: Statement
    private let queued, message: Statement

    /// Opens search.db in `folder` (made if need be) and a read connection to guildhall.db at `mainPath`.
    init(folder: String, mainPath: String) throws(StoreError) {
        index = try SQLiteConnection(path: (folder as NSString).appendingPathComponent(Self.file))
        try index.execute("PRAGMA journal_mode=WAL")
        try index.execute("PRAGMA synchronous=NORMAL")
        try index.execute("""
            CREATE VIRTUAL TABLE IF NOT EXISTS message_search USING fts5(body, tokenize = 'unicode61 remove_diacritics 2', columnsize = 0);
            CREATE TABLE IF NOT EXISTS progress(id INTEGER PRIMARY KEY CHECK (id = 0), queue_seq INTEGER NOT NULL);
            """)
        main = try SQLiteConnection(path: mainPath, readOnly: true)
        // A message indexed before (edited) is replaced: FTS5 takes its old words out first.
        insert = try index.prepare("INSERT OR REPLACE INTO message_search(rowid, body) VALUES(?, ?)")
        remove = try index.prepare("DELETE FROM message_search WHERE rowid = ?")
        saveProgress = try index.prepare("INSERT INTO progress(id, queue_seq) VALUES(0, ?) ON CONFLICT(id) DO UPDATE SET queue_seq = excluded.queue_seq")
        queued = try main.prepare("SELECT seq, uid FROM search_queue WHERE seq > ? ORDER BY seq LIMIT ?")
        message = try main.prepare("SELECT kind, text, attachments, removed FROM messages WHERE uid = ?")
    }

    /// The last queue seq applied; nil when search.db has never been filled.
    func applied() throws(StoreError) -> UInt64? {
        let s = try index.prepare("SELECT queue_seq FROM progress WHERE id = 0", persistent: false)
        return try s.step() ? s.uint(0) : nil
    }

    /// Empties the index and fills it from every message stored, as of one read of guildhall.db; returns the queue seq that read covers.
    @discardableResult
    func rebuild() throws(StoreError) -> UInt64 {
        try main.execute("BEGIN")
        defer { try? main.execute("COMMIT") }
        let top = try main.prepare("SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'search_queue'), 0)", persistent: false)
        let covered: UInt64 = try top.step() ? top.uint(0) : 0
        let rows = try main.prepare("SELECT uid, CASE kind WHEN 0 THEN text ELSE '' END, attachments FROM messages "
                                    + "WHERE removed = 0 AND (kind = 0 AND text != '' OR attachments != '')", persistent: false)
        try write { () throws(StoreError) in
            try index.execute("DELETE FROM message_search")
            while try rows.step() { try add(rows.uint(0), text: rows.text(1), files: Self.names(rows.text(2))) }
            saveProgress.reset().bind(1, covered)
            try saveProgress.run()
        }
        return covered
    }

    /// Applies up to `limit` queue rows after `after`; the last seq applied (`after` when there were none).
    func catchUp(after: UInt64, limit: Int) throws(StoreError) -> UInt64 {
        // The queue rows and the messages they name, as of one read.
        try main.execute("BEGIN")
        var rows: [(seq: UInt64, uid: MessageUID)] = []
        var found: [MessageUID: (words: String, files: [String], kept: Bool)] = [:]
        do {
            let q = queued.reset()
            q.bind(1, after); q.bind(2, Int64(limit))
            while try q.step() { rows.append((q.uint(0), q.uint(1))) }
            q.reset()
            for (_, uid) in rows where found[uid] == nil {
                let m = message.reset()
                m.bind(1, uid)
                // Gone or removed: out of the index.
                found[uid] = try m.step() && !m.bool(3) ? (m.int(0) == 0 ? m.text(1) : "", Self.names(m.text(2)), true) : ("", [], false)
                m.reset()
            }
            try main.execute("COMMIT")
        } catch {
            try? main.execute("ROLLBACK")
            throw error
        }
        guard let last = rows.last?.seq else { return after }
        try write { () throws(StoreError) in
            for (uid, entry) in found {
                if entry.kept, try add(uid, text: entry.words, files: entry.files) { continue }
                let r = remove.reset()
                r.bind(1, uid)
                try r.run()
            }
            saveProgress.reset().bind(1, last)
            try saveProgress.run()
        }
        return last
    }

    /// Indexes a message's words: its text (custom content has none the server can read) and its files' names; false when it has none.
    @discardableResult
    private func add(_ uid: MessageUID, text: String, files: [String]) throws(StoreError) -> Bool {
        var words = files.joined(separator: " ")
        if !text.isEmpty { words = words.isEmpty ? text : text + " " + words }
        guard !words.isEmpty else { return false }
        let s = insert.reset()
        s.bind(1, uid)
        s.bind(2, SearchText.indexed(words))
        try s.run()
        return true
    }

    private func write(_ body: () throws(StoreError) -> Void) throws(StoreError) {
        try index.execute("BEGIN IMMEDIATE")
        do {
            try body()
            try index.execute("COMMIT")
        } catch {
            try? index.execute("ROLLBACK")
            throw error
        }
    }

    /// The file names in a message row's `attachments`.
    static func names(_ attachments: String) -> [String] {
        guard !attachments.isEmpty else { return [] }
        return ((try? JSONDecoder().decode([FileAttachment].self, from: Data(attachments.utf8))) ?? []).map(\.filename)
    }

    /// At the writer's start: off marks the index stale; on, a stale index
    /// (search was off while messages came and went) is thrown away, to be
    /// rebuilt, along with the queue.
    static func open(_ db: SQLiteConnection, folder: String, on: Bool) throws(StoreError) {
        guard on else { return try db.execute("UPDATE search_state SET stale = 1") }
        guard try db.scalar("SELECT stale FROM search_state") != 0 else { return }
        let path = (folder as NSString).appendingPathComponent(file)
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
        try db.execute("DELETE FROM search_queue; UPDATE search_state SET stale = 0")
    }
}

extension Store {
    /// Bytes the search index takes (search.db's FTS5 tables, from SQLite's dbstat).
    public func searchIndexBytes() throws(StoreError) -> Int64 {
        let db = try SQLiteConnection(path: ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent(SearchIndex.file),
                                      readOnly: true)
        return try db.scalar("SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name LIKE 'message_search%'")
    }
}
