// The message search index (docs/features.md "Search"): FTS5 table
// `message_search`, one row per message not removed that has words, rowid
// its uid: its text, and the names of the files it carries. The writer
// keeps it in the same transaction as the message: a send adds the row, an
// edit replaces it (the files stay, read from the message's row), a recall
// or delete takes it out. Writer thread only (and the migration, which
// fills it from what is stored).

import Foundation
import GuildhallCore

final class SearchIndex {
    private let db: SQLiteConnection
    private let insert, remove: Statement
    /// Prepared at the first edit (a database older than files has no such column while it migrates).
    private var files: Statement?

    init(_ db: SQLiteConnection) throws(StoreError) {
        self.db = db
        insert = try db.prepare("INSERT INTO message_search(rowid, body) VALUES(?, ?)")
        remove = try db.prepare("DELETE FROM message_search WHERE rowid = ?")
    }

    /// A new message's words: its text (custom content has none the server can read) and its files' names.
    func added(_ uid: MessageUID, _ content: MessageContent, files: [String] = []) throws(StoreError) {
        var words = files.joined(separator: " ")
        if case .text(let text) = content, !text.isEmpty { words = words.isEmpty ? text : text + " " + words }
        guard !words.isEmpty else { return }
        let s = insert.reset()
        s.bind(1, uid)
        s.bind(2, SearchText.indexed(words))
        try s.run()
    }

    func edited(_ uid: MessageUID, _ content: MessageContent) throws(StoreError) {
        try removed(uid)
        if files == nil { files = try db.prepare("SELECT attachments FROM messages WHERE uid = ?") }
        let s = files!.reset()
        s.bind(1, uid)
        let names = try s.step() ? Self.names(s.text(0)) : []
        s.reset()
        try added(uid, content, files: names)
    }

    /// The file names in a message row's `attachments`.
    static func names(_ attachments: String) -> [String] {
        guard !attachments.isEmpty else { return [] }
        return ((try? JSONDecoder().decode([FileAttachment].self, from: Data(attachments.utf8))) ?? []).map(\.filename)
    }

    func removed(_ uid: MessageUID) throws(StoreError) {
        let s = remove.reset()
        s.bind(1, uid)
        try s.run()
    }

    /// Starts the index on or off (setting search-index): off marks it
    /// stale; on, a stale index is emptied and filled again, since messages
    /// came and went while it was off.
    static func open(_ db: SQLiteConnection, on: Bool) throws(StoreError) {
        guard on else { return try db.execute("UPDATE search_state SET stale = 1") }
        guard try db.scalar("SELECT stale FROM search_state") != 0 else { return }
        try db.execute("BEGIN IMMEDIATE")
        do {
            try db.execute("DELETE FROM message_search")
            try fill(db)
            try db.execute("UPDATE search_state SET stale = 0")
            try db.execute("COMMIT")
        } catch {
            try? db.execute("ROLLBACK")
            throw error
        }
    }

    /// Indexes every message already stored and not removed (`withFiles`: once messages carry files, their names too).
    static func fill(_ db: SQLiteConnection, withFiles: Bool = true) throws(StoreError) {
        let rows = withFiles
            ? try db.prepare("SELECT uid, CASE kind WHEN 0 THEN text ELSE '' END, attachments FROM messages "
                             + "WHERE removed = 0 AND (kind = 0 AND text != '' OR attachments != '')", persistent: false)
            : try db.prepare("SELECT uid, text, '' FROM messages WHERE kind = 0 AND removed = 0 AND text != ''", persistent: false)
        let index = try SearchIndex(db)
        while try rows.step() {
            try index.added(rows.uint(0), .text(rows.text(1)), files: names(rows.text(2)))
        }
    }
}

extension Store {
    /// Bytes the search index takes in the database file (its FTS5 tables), from SQLite's dbstat.
    public func searchIndexBytes() throws(StoreError) -> Int64 {
        let db = try SQLiteConnection(path: path, readOnly: true)
        return try db.scalar("SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name LIKE 'message_search%'")
    }
}
