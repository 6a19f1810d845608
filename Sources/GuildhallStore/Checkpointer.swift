// Copies committed WAL frames into the database file on a thread of its
// own, so no commit waits for it, and starts the WAL over once it is long.
//
// SQLite's automatic checkpoint runs inside the commit that crosses the
// WAL's size mark and fsyncs there: measured at 1,000 sends/s, a 3.5–4 ms
// stall of the committing thread every half second, which was the send
// latency's p99 (strace -T, `bench fanout --subscribers 1 --rate 1000`).
// Here checkpoints are PASSIVE: they never block the writer and never wait
// for it.
//
// A passive checkpoint alone never lets the WAL start over while commits
// keep coming: the WAL restarts only at a write that finds every frame
// copied, and a checkpoint that a commit overtook leaves the newest frames
// behind. The WAL then grew to the writer's backstop (`wal_autocheckpoint`,
// 40 MB) and the writer copied and fsynced the rest itself: 80–220 ms of
// stall about every second under sustained sends (strace -T; shape C of
// docs/performance.md). So once the WAL holds `restartPages`, a round
//   1. copies what it can (passive, the writer running on);
//   2. flushes the database file and the WAL, and copies again what was
//      committed meanwhile, until a pass finds little (the writer still
//      running on);
//   3. asks the writer to checkpoint with RESTART between two of its
//      transactions (`WALRestart`), waking it if it idles (a quiet server's
//      loops commit themselves): only the frames committed since the last
//      pass are left to copy and flush, and the next write starts the WAL
//      over from its beginning.
// Readers holding old frames make step 3 give up after a short wait; the
// next round tries again.

import CSQLite
import Dispatch
import Foundation
import GuildhallCore
import Synchronization

final class Checkpointer: Sendable {
    private let stopping = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    init(path: String, everyMillis: Int, restartPages: Int32, restart: WALRestart) throws(StoreError) {
        let c = try SQLiteConnection(path: path)
        // A connection learns the database is in WAL mode only once it reads
        // it; until then a checkpoint is a silent no-op.
        try c.execute("PRAGMA journal_mode=WAL")
        let connection = ConnectionHandOver(c)
        NamedThread.start("gh-checkpoint") { [stopping, done] in
            Checkpointer.run(connection.take(), every: everyMillis, until: stopping, restartPages: restartPages, restart: restart)
            // The connection is closed by now: `stop()` returns with the
            // database closed (the last connection to close removes the WAL).
            done.signal()
        }
    }

    private static func run(_ db: SQLiteConnection, every millis: Int, until stopping: DispatchSemaphore, restartPages: Int32,
                            restart: WALRestart) {
        while stopping.wait(timeout: .now() + .milliseconds(millis)) == .timedOut {
            round(db, restartPages: restartPages, restart: restart)
        }
    }

    private static func round(_ db: SQLiteConnection, restartPages: Int32, restart: WALRestart) {
        var walPages: Int32 = 0, copied: Int32 = 0
        // Busy (another checkpoint) or nothing to copy: the next round tries again.
        guard passive(db, &walPages, &copied), walPages >= restartPages else { return }
        // Commits go on meanwhile (a pass counts the WAL as it found it): a few
        // passes shrink what is left for the writer. Even a WAL copied whole
        // needs the writer: its transaction under way began before, so its next
        // write would not start the WAL over.
        for _ in 0..<4 {
            sync(db, SQLITE_FCNTL_FILE_POINTER)
            sync(db, SQLITE_FCNTL_JOURNAL_POINTER)
            let before = copied
            guard passive(db, &walPages, &copied) else { return }
            if copied - before < restartPages / 8 { break }
        }
        restart.ask()
    }

    private static func passive(_ db: SQLiteConnection, _ walPages: inout Int32, _ copied: inout Int32) -> Bool {
        sqlite3_wal_checkpoint_v2(db.db, nil, SQLITE_CHECKPOINT_PASSIVE, &walPages, &copied) == SQLITE_OK
    }

    /// Flushes the database file or the WAL through SQLite's own handle for it
    /// (a descriptor of our own, once closed, would drop SQLite's locks on the file).
    private static func sync(_ db: SQLiteConnection, _ which: Int32) {
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(db.db, "main", which, &file) == SQLITE_OK, let file,
              let sync = file.pointee.pMethods?.pointee.xSync else { return }
        _ = sync(file, SQLITE_SYNC_NORMAL)
    }

    func stop() {
        stopping.signal()
        done.wait()
    }
}

/// A WAL restart the checkpoint thread asks for and the writer carries out
/// between two of its transactions, when no commit is under way. The writer
/// is woken for it: on a quiet server the loops commit themselves while it
/// idles, and unasked the WAL grew to the backstop, where a loop's own commit
/// copied and fsynced (a WAL of 41 MB after 3,000 commits made on a loop).
final class WALRestart: Sendable {
    private let asked = Atomic<Bool>(false)
    private let wakeWriter: @Sendable () -> Void

    init(wakeWriter: @escaping @Sendable () -> Void) { self.wakeWriter = wakeWriter }

    func ask() {
        asked.store(true, ordering: .releasing)
        wakeWriter()
    }

    /// Writer thread, between transactions: copies what the checkpoint thread
    /// left and starts the WAL over, waiting a few milliseconds at most for readers.
    func carryOut(on db: SQLiteConnection) {
        guard asked.exchange(false, ordering: .acquiring) else { return }
        sqlite3_busy_timeout(db.db, 5)
        _ = sqlite3_wal_checkpoint_v2(db.db, nil, SQLITE_CHECKPOINT_RESTART, nil, nil)
        sqlite3_busy_timeout(db.db, SQLiteConnection.busyMillis)
    }
}
