// Online backup (docs/operating.md): a consistent copy of the database while writes
// go on, made with SQLite's `VACUUM INTO` on a connection of its own (it
// reads one snapshot of the WAL database, so commits during it are either
// wholly in the copy or not at all), and the check a restore makes first.
// Any thread but the loop's: it takes as long as the database is large.

import Foundation
import GuildhallCore

/// A finished backup: where, how big, and the newest message it holds.
public struct BackupReport: Sendable, Equatable {
    public let path: String
    public let bytes: Int
    public let lastMessageUID: MessageUID
}

extension Store {
    /// Writes a copy into `<folder>/backups/<UTC time>.db`.
    public func backup(now: Date = Date()) throws(StoreError) -> BackupReport {
        let folder = (path as NSString).deletingLastPathComponent + "/backups"
        do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
            throw StoreError(code: 0, message: "cannot create \(folder): \(error)")
        }
        let stamp = ISO8601DateFormatter.string(from: now, timeZone: TimeZone(identifier: "UTC")!,
                                                formatOptions: [.withFullDate, .withTime, .withFractionalSeconds])
            .replacingOccurrences(of: ":", with: "")
        let target = "\(folder)/\(stamp)Z.db"
        let source = try SQLiteConnection(path: path, readOnly: true)
        try source.execute("VACUUM INTO '\(target.replacingOccurrences(of: "'", with: "''"))'")
        let copy = try SQLiteConnection(path: target, readOnly: true)
        let last = MessageUID(bitPattern: try copy.scalar("SELECT COALESCE(MAX(uid), 0) FROM messages"))
        let size = ((try? FileManager.default.attributesOfItem(atPath: target))?[.size] as? Int) ?? 0
        return BackupReport(path: target, bytes: size, lastMessageUID: last)
    }

    /// `PRAGMA integrity_check` of the database at `path`: "ok", or SQLite's
    /// list of problems. Read-write (the default) replays a WAL left by a crash first.
    public static func integrityCheck(_ path: String, readOnly: Bool = false) throws(StoreError) -> String {
        guard FileManager.default.fileExists(atPath: path) else { throw StoreError(code: 0, message: "no database at \(path)") }
        let db = try SQLiteConnection(path: path, readOnly: readOnly)
        let statement = try db.prepare("PRAGMA integrity_check", persistent: false)
        var lines: [String] = []
        while try statement.step() { lines.append(statement.text(0)) }
        return lines.joined(separator: "; ")
    }

    /// Checks a backup file (`PRAGMA integrity_check`) and copies it into
    /// `folder`, which must hold no database yet.
    public static func restore(_ backup: String, into folder: String) throws(StoreError) {
        let target = folder + "/guildhall.db"
        guard !FileManager.default.fileExists(atPath: target) else {
            throw StoreError(code: 0, message: "\(folder) already holds a database; restore into an empty data folder")
        }
        guard try integrityCheck(backup, readOnly: true) == "ok" else {
            throw StoreError(code: 0, message: "\(backup) failed its integrity check; it was not restored")
        }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            // A journal left without its database would be replayed onto the copy.
            let journal = folder + "/" + LocalJournal.file
            if FileManager.default.fileExists(atPath: journal) { try FileManager.default.removeItem(atPath: journal) }
            try FileManager.default.copyItem(atPath: backup, toPath: target)
        } catch {
            throw StoreError(code: 0, message: "cannot copy \(backup) into \(folder): \(error)")
        }
    }
}
