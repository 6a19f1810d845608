// A single node's journal ahead of SQLite (docs/architecture.md, "Durable
// before answered"): under synchronous = NORMAL, a loop turn's few writes are
// appended here as one record and are durable at once, as durable as a
// NORMAL commit (both survive a process crash, not a power loss: one write
// into the page cache, where a SQLite commit makes four WAL writes and six
// lock calls). The writer thread then commits them to SQLite behind it, each
// record with its sequence as the log position of `LocalJournal.shard`, so a
// start after a crash replays exactly the records SQLite does not hold.
//
// The file is written through SQLite's default VFS, so a test VFS that
// fills the disk or loses power sees it as it sees the database.
//
// Record: length (4 bytes, of what follows the checksum), FNV-1a 64 of the
// sequence and payload (8), sequence (8), payload. Little-endian. A torn or
// stale tail (a crash inside an append, bytes past a failed one) ends the
// records read back. Replay stores only records that follow what SQLite
// holds: after a power loss took SQLite's unsynced tail (the journal is
// never synced), records the journal kept past that gap are left out, so
// what is lost is a tail, never a message before one that survived.
//
// Callers: the store's writer (append, under its lock) and `Store` at open.

import CSQLite
import Foundation
import Synchronization

public final class LocalJournal: Sendable {
    /// Its row in `log_positions`: how far SQLite holds the journal.
    public static let shard = -1
    public static let file = "guildhall.journal"
    /// Past this size the file starts over once SQLite holds all of it.
    public static let defaultRestartBytes: Int64 = 8 << 20
    private let restartBytes: Int64

    private struct State: ~Copyable {
        var file: UnsafeMutablePointer<sqlite3_file>?
        /// The path as SQLite's VFS keeps it (it holds the pointer until the file closes).
        let name: UnsafeMutablePointer<CChar>
        /// Where the next record goes.
        var end: Int64 = 0
        /// The last sequence appended (or held in SQLite when the file started over).
        var lastSeq: UInt64 = 0
    }
    private let state: Mutex<State>

    init(folder: String, restartBytes: Int64 = LocalJournal.defaultRestartBytes) throws(StoreError) {
        self.restartBytes = restartBytes
        guard let vfs = sqlite3_vfs_find(nil) else { throw StoreError(code: SQLITE_ERROR, message: "no SQLite VFS") }
        let name = strdup((folder as NSString).appendingPathComponent(Self.file))!
        let file = UnsafeMutableRawPointer.allocate(byteCount: Int(vfs.pointee.szOsFile), alignment: 16)
        file.initializeMemory(as: UInt8.self, repeating: 0, count: Int(vfs.pointee.szOsFile))
        let handle = file.assumingMemoryBound(to: sqlite3_file.self)
        var outFlags: Int32 = 0
        let rc = vfs.pointee.xOpen(vfs, name, handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_MAIN_DB, &outFlags)
        guard rc == SQLITE_OK else {
            if handle.pointee.pMethods != nil { _ = handle.pointee.pMethods.pointee.xClose(handle) }
            file.deallocate()
            let path = String(cString: name)
            free(name)
            throw StoreError(code: rc, message: "cannot open \(path)")
        }
        state = Mutex(State(file: handle, name: name))
    }

    deinit {
        close()
        state.withLock { free($0.name) }
    }

    /// The records in the file, in order, up to the first that is torn, fails
    /// its checksum or does not follow the one before it (sequences are consecutive).
    func records() throws(StoreError) -> [(seq: UInt64, payload: [UInt8])] {
        try state.withLock { s throws(StoreError) in
            guard let f = s.file else { return [] }
            var size: Int64 = 0
            try Self.check(f.pointee.pMethods.pointee.xFileSize(f, &size), "size")
            var bytes = [UInt8](repeating: 0, count: Int(size))
            if size > 0 {
                try Self.check(bytes.withUnsafeMutableBytes { f.pointee.pMethods.pointee.xRead(f, $0.baseAddress, Int32(size), 0) }, "read")
            }
            return Self.parse(bytes)
        }
    }

    /// Empties the file and goes on after `seq` (the last sequence SQLite holds).
    func startOver(after seq: UInt64) throws(StoreError) {
        try state.withLock { s throws(StoreError) in
            guard let f = s.file else { return }
            try Self.check(f.pointee.pMethods.pointee.xTruncate(f, 0), "truncate")
            s.end = 0
            s.lastSeq = seq
        }
    }

    /// Appends `payloads` as the next records, in one write, and, still under
    /// the lock, hands the first one's sequence to `then` (the writer queues
    /// their jobs there, so the queue's order is the journal's). Nothing is
    /// appended, nor `then` called, when the write fails. Starts the file over
    /// first when it is long and `held` (the last sequence SQLite holds) has
    /// caught up with it; at twice that length with SQLite still behind, it
    /// refuses (the caller commits the usual way, and SQLite catches up).
    func append(_ payloads: [[UInt8]], held: UInt64, then: (UInt64) -> Void) throws(StoreError) {
        try state.withLock { s throws(StoreError) in
            guard let f = s.file else { throw StoreError(code: SQLITE_MISUSE, message: "the journal is closed") }
            if s.end >= restartBytes {
                if held >= s.lastSeq {
                    try Self.check(f.pointee.pMethods.pointee.xTruncate(f, 0), "truncate")
                    s.end = 0
                } else if s.end >= 2 * restartBytes {
                    throw StoreError(code: SQLITE_FULL, message: "the journal waits for SQLite to catch up")
                }
            }
            let first = s.lastSeq + 1
            var bytes: [UInt8] = []
            for (i, p) in payloads.enumerated() { Self.record(seq: first + UInt64(i), payload: p, into: &bytes) }
            let end = s.end
            try Self.check(bytes.withUnsafeBytes { f.pointee.pMethods.pointee.xWrite(f, $0.baseAddress, Int32($0.count), end) }, "write")
            s.end += Int64(bytes.count)
            s.lastSeq = first + UInt64(payloads.count) - 1
            then(first)
        }
    }

    /// Closes the file (the store is closing).
    func close() {
        state.withLock { s in
            guard let f = s.file else { return }
            _ = f.pointee.pMethods.pointee.xClose(f)
            UnsafeMutableRawPointer(f).deallocate()
            s.file = nil
        }
    }

    // MARK: The record format

    static let headerBytes = 20

    static func record(seq: UInt64, payload: [UInt8], into out: inout [UInt8]) {
        out.reserveCapacity(out.count + headerBytes + payload.count)
        append(UInt32(payload.count + 8), to: &out)
        append(checksum(seq: seq, payload[...]), to: &out)
        append(seq, to: &out)
        out += payload
    }

    static func parse(_ bytes: [UInt8]) -> [(seq: UInt64, payload: [UInt8])] {
        var out: [(UInt64, [UInt8])] = []
        var at = 0, last: UInt64 = 0
        while bytes.count - at >= headerBytes {
            let length = Int(read(UInt32.self, bytes, at))
            guard length >= 8, bytes.count - at - 12 >= length else { break }
            let sum = read(UInt64.self, bytes, at + 4), seq = read(UInt64.self, bytes, at + 12)
            let payload = bytes[(at + headerBytes)..<(at + 12 + length)]
            guard sum == checksum(seq: seq, payload), last == 0 || seq == last + 1 else { break }
            out.append((seq, Array(payload)))
            last = seq
            at += 12 + length
        }
        return out
    }

    private static func checksum(seq: UInt64, _ payload: ArraySlice<UInt8>) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for i in 0..<8 { h = (h ^ UInt64(UInt8(truncatingIfNeeded: seq >> (8 * UInt64(i))))) &* 0x100_0000_01b3 }
        for b in payload { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h
    }

    private static func append<T: FixedWidthInteger>(_ v: T, to out: inout [UInt8]) {
        withUnsafeBytes(of: v.littleEndian) { out += $0 }
    }

    private static func read<T: FixedWidthInteger>(_: T.Type, _ bytes: [UInt8], _ at: Int) -> T {
        var v: T = 0
        for i in 0..<MemoryLayout<T>.size { v |= T(bytes[at + i]) << (8 * i) }
        return v
    }

    private static func check(_ rc: Int32, _ what: String) throws(StoreError) {
        guard rc == SQLITE_OK else { throw StoreError(code: rc, message: "journal \(what) failed") }
    }
}
