// The audit log's rows (AuditLog.swift): written by the writer with the
// change they record, read a page at a time by the reader, pruned past the
// retention. An entry's changes are kept as the JSON of its AuditChange
// list, so an operator can read them with sqlite3. Pages walk the
// (server_id, id) index newest first; the filters are checked on the way,
// and retention bounds how far a rare filter can walk.

import Foundation
import GuildhallCore

/// The writer's statements.
final class AuditWrites {
    private let insert, prune, deleteServer: Statement

    init(_ db: SQLiteConnection) throws(StoreError) {
        insert = try db.prepare("INSERT OR IGNORE INTO audit_log(id, server_id, actor, action, target, channel_id, changes, reason, at) "
                                + "VALUES(?,?,?,?,?,?,?,?,?)")
        prune = try db.prepare("DELETE FROM audit_log WHERE at < ?")
        deleteServer = try db.prepare("DELETE FROM audit_log WHERE server_id = ?")
    }

    func save(_ e: AuditEntry) throws(StoreError) {
        let s = insert.reset()
        s.bind(1, e.id); s.bind(2, e.serverID); s.bind(3, e.actor); s.bind(4, UInt64(e.action.rawValue)); s.bind(5, e.target)
        s.bind(6, e.channelID); s.bind(7, AuditRows.text(e.changes)); s.bind(8, e.reason); s.bind(9, e.time)
        try s.run()
    }

    func prune(before time: UInt64) throws(StoreError) {
        prune.reset().bind(1, time)
        try prune.run()
    }

    /// A deleted server's log goes with it.
    func serverDeleted(_ id: ServerID) throws(StoreError) {
        deleteServer.reset().bind(1, id)
        try deleteServer.run()
    }
}

/// The reader's query.
final class AuditReads {
    private let page: Statement

    init(_ db: SQLiteConnection) throws(StoreError) {
        page = try db.prepare("SELECT id, server_id, actor, action, target, channel_id, changes, reason, at FROM audit_log "
                              + "WHERE server_id = ?1 AND id < ?2 AND (?3 = '' OR actor = ?3) AND (?4 = 0 OR action = ?4) "
                              + "AND (?5 = '' OR target = ?5) ORDER BY id DESC LIMIT ?6")
    }

    /// The page `q` asks for, and whether older entries pass its filters.
    func run(_ q: AuditQuery) throws(StoreError) -> (entries: [AuditEntry], more: Bool) {
        let s = page.reset()
        s.bind(1, q.serverID); s.bind(2, q.before == 0 ? UInt64(Int64.max) : q.before); s.bind(3, q.actor ?? "")
        s.bind(4, UInt64(q.action?.rawValue ?? 0)); s.bind(5, q.target ?? ""); s.bind(6, Int64(q.limit + 1))
        defer { s.reset() }
        var entries: [AuditEntry] = []
        while try s.step() {
            // Only this version writes rows; an action it does not know would be a newer one's.
            guard let action = AuditAction(rawValue: UInt32(clamping: s.uint(3))) else { continue }
            entries.append(AuditEntry(id: s.uint(0), serverID: s.uint(1), actor: s.text(2), action: action, target: s.text(4),
                                      channelID: s.uint(5), changes: AuditRows.changes(s.text(6)), reason: s.text(7), time: s.uint(8)))
        }
        let more = entries.count > q.limit
        if more { entries.removeLast() }
        return (entries, more)
    }
}

enum AuditRows {
    static func text(_ changes: [AuditChange]) -> String {
        guard !changes.isEmpty, let data = try? JSONEncoder().encode(changes) else { return "[]" }
        return String(decoding: data, as: UTF8.self)
    }

    static func changes(_ text: String) -> [AuditChange] {
        (try? JSONDecoder().decode([AuditChange].self, from: Data(text.utf8))) ?? []
    }
}
