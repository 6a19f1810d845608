// The message search index (docs/features.md "Search"): FTS5 table
// `message_search`, one row per text message not removed, rowid its uid.
// The writer keeps it in the same transaction as the message: a send adds
// the row, an edit replaces it, a recall or delete takes it out. Writer
// thread only (and the migration, which fills it from what is stored).

import GuildhallCore

final class SearchIndex {
    private let insert, remove: Statement

    init(_ db: SQLiteConnection) throws(StoreError) {
        insert = try db.prepare("INSERT INTO message_search(rowid, body) VALUES(?, ?)")
        remove = try db.prepare("DELETE FROM message_search WHERE rowid = ?")
    }

    /// A new message's words (custom content has none the server can read).
    func added(_ uid: MessageUID, _ content: MessageContent) throws(StoreError) {
        guard case .text(let text) = content, !text.isEmpty else { return }
        let s = insert.reset()
        s.bind(1, uid)
        s.bind(2, SearchText.indexed(text))
        try s.run()
    }

    func edited(_ uid: MessageUID, _ content: MessageContent) throws(StoreError) {
        try removed(uid)
        try added(uid, content)
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

    /// Indexes every text message already stored and not removed.
    static func fill(_ db: SQLiteConnection) throws(StoreError) {
        let rows = try db.prepare("SELECT uid, text FROM messages WHERE kind = 0 AND removed = 0 AND text != ''", persistent: false)
        let index = try SearchIndex(db)
        while try rows.step() {
            try index.added(rows.uint(0), .text(rows.text(1)))
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
