// A minimal face over SQLite's C API: a connection, prepared statements,
// binds and columns. Each `SQLiteConnection` is confined to the one thread
// that uses it (opened with SQLITE_OPEN_NOMUTEX).

import CSQLite
import Synchronization

/// A failed SQLite call. `message` is for logs only: it may hold SQL and
/// paths, so the server never sends it to a client.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public let code: Int32
    public let message: String
    public var description: String { "sqlite \(code): \(message)" }
    public init(code: Int32, message: String) { self.code = code; self.message = message }
}

/// Set once, before the first connection initializes SQLite (the shim says why).
private let memoryStatisticsSkipped: Void = { _ = guildhall_sqlite_skip_memory_statistics() }()

/// SQLite's "transient" destructor: SQLite copies the bytes before bind returns.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
/// The empty text, bound in place (SQLITE_STATIC): a copy of it took an allocation in every bind.
private let emptyText: StaticString = ""

final class SQLiteConnection {
    let db: OpaquePointer
    /// The deadline SQLite's progress handler reads (SearchReads.swift), held here
    /// for as long as the handler may run: the handler gets only a raw pointer to it.
    var deadline: Deadline?
    /// How long a call waits for another connection's lock before it fails busy.
    static let busyMillis: Int32 = 5000

    init(path: String, readOnly: Bool = false) throws(StoreError) {
        memoryStatisticsSkipped
        var handle: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(handle)
            throw StoreError(code: rc, message: "\(message) (\(path))")
        }
        db = handle
        sqlite3_busy_timeout(db, Self.busyMillis)
    }

    deinit { sqlite3_close_v2(db) }

    func execute(_ sql: String) throws(StoreError) {
        var error: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &error)
        if rc != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? "error"
            sqlite3_free(error)
            throw StoreError(code: rc, message: message)
        }
    }

    func prepare(_ sql: String, persistent: Bool = true) throws(StoreError) -> Statement {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw lastError(rc) }
        return Statement(stmt, connection: self)
    }

    /// Statements stepped and not yet reset or finished: each holds a read (or write)
    /// transaction open, which keeps checkpoints from reclaiming the WAL. 0 when idle.
    var busyStatements: Int {
        var count = 0
        var stmt = sqlite3_next_stmt(db, nil)
        while let s = stmt {
            if sqlite3_stmt_busy(s) != 0 { count += 1 }
            stmt = sqlite3_next_stmt(db, s)
        }
        return count
    }

    func lastError(_ rc: Int32) -> StoreError {
        StoreError(code: rc, message: String(cString: sqlite3_errmsg(db)))
    }

    /// Runs `sql` and returns the first column of the first row as an integer.
    func scalar(_ sql: String) throws(StoreError) -> Int64 {
        let s = try prepare(sql, persistent: false)
        return try s.step() ? s.int(0) : 0
    }
}

final class Statement {
    let stmt: OpaquePointer
    unowned let connection: SQLiteConnection

    init(_ stmt: OpaquePointer, connection: SQLiteConnection) {
        self.stmt = stmt
        self.connection = connection
    }

    deinit { sqlite3_finalize(stmt) }

    /// Clears bindings and state so the statement can run again.
    @discardableResult
    func reset() -> Statement {
        sqlite3_reset(stmt)
        sqlite3_clear_bindings(stmt)
        return self
    }

    /// Readies the statement to run again keeping its bindings, for a caller
    /// that binds every parameter each time: each bound value keeps the memory
    /// it took, which the next bind reuses (clearing them freed it, and the
    /// next bind allocated it again).
    func rebind() -> Statement {
        sqlite3_reset(stmt)
        return self
    }

    func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(stmt, index, value) }
    func bind(_ index: Int32, _ value: UInt64) { sqlite3_bind_int64(stmt, index, Int64(bitPattern: value)) }
    func bind(_ index: Int32, _ value: Bool) { sqlite3_bind_int64(stmt, index, value ? 1 : 0) }
    /// Binds the string's own UTF-8 bytes (passing a String as a C string made a heap copy per bind, five per message).
    func bind(_ index: Int32, _ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            // An empty buffer may have no address, and a null pointer would bind NULL, not ''.
            guard let base = utf8.baseAddress, !utf8.isEmpty else {
                _ = emptyText.utf8Start.withMemoryRebound(to: CChar.self, capacity: 1) { sqlite3_bind_text(stmt, index, $0, 0, nil) }
                return
            }
            _ = base.withMemoryRebound(to: CChar.self, capacity: utf8.count) { sqlite3_bind_text(stmt, index, $0, Int32(utf8.count), transient) }
        }
    }
    func bind(_ index: Int32, _ value: [UInt8]) {
        // The empty blob as a zero-length blob, not a copy of nothing (an allocation).
        guard !value.isEmpty else { sqlite3_bind_zeroblob(stmt, index, 0); return }
        _ = value.withUnsafeBytes { sqlite3_bind_blob(stmt, index, $0.baseAddress, Int32($0.count), transient) }
    }

    /// Steps once: true when a row is ready, false when done.
    func step() throws(StoreError) -> Bool {
        let rc = sqlite3_step(stmt)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.lastError(rc)
            sqlite3_reset(stmt)
            throw error
        }
    }

    /// Steps to completion, for statements that return no rows.
    func run() throws(StoreError) {
        while try step() {}
        sqlite3_reset(stmt)
    }

    func int(_ column: Int32) -> Int64 { sqlite3_column_int64(stmt, column) }
    func uint(_ column: Int32) -> UInt64 { UInt64(bitPattern: sqlite3_column_int64(stmt, column)) }
    func bool(_ column: Int32) -> Bool { sqlite3_column_int64(stmt, column) != 0 }
    func text(_ column: Int32) -> String {
        guard let p = sqlite3_column_text(stmt, column) else { return "" }
        return String(cString: p)
    }
    func blob(_ column: Int32) -> [UInt8] {
        let n = Int(sqlite3_column_bytes(stmt, column))
        guard n > 0, let p = sqlite3_column_blob(stmt, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }
}

/// Statements found busy when a connection (or a store) closed (0 expected), kept where the
/// thread that closes it and whoever waits for it both reach it.
public final class BusyAtClose: Sendable {
    private let count = Atomic<Int>(0)
    public init() {}
    public func record(_ n: Int) { count.store(n, ordering: .relaxed) }
    public var value: Int { count.load(ordering: .relaxed) }
}
