// Message search on the reader's connection (docs/features.md "Search"):
// the FTS5 index walked newest first, each match joined to its message and
// kept only when it is in a channel the caller may read now, by the sender
// and in the time asked. The caller's channels come in as a list: the index
// knows no permissions, the home decides them. A search runs under a
// deadline, past which SQLite is interrupted. Reader thread only.

import CSQLite
import Foundation
import GuildhallCore

/// One search, as the home asks it.
public struct MessageSearch: Sendable, Equatable {
    /// The FTS5 expression (SearchQuery.expression).
    public var expression: String
    /// The channels (or the conversation) the caller may read: only these answer.
    public var channels: [ChannelID]
    /// Only this sender's messages ("": anyone).
    public var sender: UserID = ""
    /// Sent at or after, and before (0: no bound).
    public var afterTime: UInt64 = 0, beforeTime: UInt64 = 0
    /// Older than this uid (0: from the newest).
    public var beforeUID: MessageUID = 0
    /// Only messages that carry files.
    public var withFiles = false
    public var limit: Int
    /// Whose reactions count as "mine".
    public var viewer: UserID
    /// How long the search may take.
    public var deadlineMillis: Int

    public init(expression: String, channels: [ChannelID], limit: Int, viewer: UserID, deadlineMillis: Int) {
        self.expression = expression; self.channels = channels; self.limit = limit; self.viewer = viewer; self.deadlineMillis = deadlineMillis
    }
}

final class SearchReads {
    private let db: SQLiteConnection
    private let query, queued: Statement
    private let indexer: SearchIndexer

    /// `db` has search.db attached as `idx`.
    init(_ db: SQLiteConnection, indexer: SearchIndexer) throws(StoreError) {
        self.db = db
        self.indexer = indexer
        queued = try db.prepare("SELECT COALESCE(MAX(seq), 0) FROM search_queue")
        // CROSS JOIN keeps the index outermost, walked by rowid (uid) downwards.
        query = try db.prepare("""
            SELECT \(MessageRows.readColumns), snippet(message_search, 0, char(57344), char(57345), '…', 24)
            FROM idx.message_search CROSS JOIN messages ON messages.uid = message_search.rowid
            WHERE message_search MATCH ?1 AND message_search.rowid < ?2
              AND channel_id IN (SELECT value FROM json_each(?3))
              AND (?4 = '' OR sender = ?4) AND sent_time >= ?5 AND sent_time < ?6 AND removed = 0
              AND (?8 = 0 OR attachments != '')
            ORDER BY message_search.rowid DESC LIMIT ?7
            """)
    }

    /// The matches, newest first, with a snippet each; `hasMore` when another page follows.
    func run(_ search: MessageSearch, into result: inout ReadResult) throws(StoreError) {
        let s = query.reset()
        s.bind(1, search.expression)
        s.bind(2, search.beforeUID == 0 ? UInt64(Int64.max) : search.beforeUID)
        s.bind(3, "[" + search.channels.map(String.init).joined(separator: ",") + "]")
        s.bind(4, search.sender)
        s.bind(5, search.afterTime)
        s.bind(6, search.beforeTime == 0 ? UInt64(Int64.max) : search.beforeTime)
        s.bind(7, Int64(search.limit + 1))
        s.bind(8, search.withFiles)
        defer { s.reset() }
        // What was committed before this search is in the index before it reads.
        let q = queued.reset()
        let newest: UInt64 = try q.step() ? q.uint(0) : 0
        q.reset()
        guard indexer.wait(for: newest, until: Date().addingTimeInterval(Double(search.deadlineMillis) / 1000)) else {
            throw StoreError(code: SQLITE_INTERRUPT, message: "the search index is behind; it did not catch up within the search's deadline")
        }
        let deadline = Deadline(afterMillis: search.deadlineMillis)
        db.interrupting(at: deadline)
        defer { db.interrupting(at: nil) }
        while try s.step() {
            result.messages.append(MessageRows.readAll(s))
            result.snippets.append(s.text(Int32(MessageRows.readColumnCount)))
        }
        result.hasMore = result.messages.count > search.limit
        if result.hasMore {
            result.messages.removeLast()
            result.snippets.removeLast()
        }
    }
}

/// A moment on the monotonic clock, for SQLite's progress handler to compare with.
final class Deadline {
    let at: UInt64
    init(afterMillis ms: Int) { at = DispatchTime.now().uptimeNanoseconds + UInt64(max(ms, 1)) * 1_000_000 }
    var passed: Bool { DispatchTime.now().uptimeNanoseconds >= at }
}

extension SQLiteConnection {
    /// From now on, statements stop with SQLITE_INTERRUPT once `deadline` passes (nil: never).
    func interrupting(at deadline: Deadline?) {
        self.deadline = deadline
        guard let deadline else { return sqlite3_progress_handler(db, 0, nil, nil) }
        // Checked every few thousand virtual machine steps: cheap, and fine-grained enough for a deadline in ms.
        sqlite3_progress_handler(db, 4000, { context in
            Unmanaged<Deadline>.fromOpaque(context!).takeUnretainedValue().passed ? 1 : 0
        }, Unmanaged.passUnretained(deadline).toOpaque())
    }
}

extension StoreError {
    /// The statement was stopped at its deadline.
    public var interrupted: Bool { code == SQLITE_INTERRUPT }
}
