// Copies committed WAL frames into the database file on a thread of its
// own, so no commit waits for it. SQLite's automatic checkpoint runs inside
// the commit that crosses the WAL's size mark and fsyncs there: measured at
// 1,000 sends/s, a 3.5–4 ms stall of the committing thread every half
// second, which was the send latency's p99 (strace -T, `bench fanout
// --subscribers 1 --rate 1000`). Here checkpoints are PASSIVE: they never
// block the writer and never wait for it.

import CSQLite
import Dispatch
import Foundation

final class Checkpointer: Sendable {
    private let stopping = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    init(path: String, everyMillis: Int) throws(StoreError) {
        let c = try SQLiteConnection(path: path)
        // A connection learns the database is in WAL mode only once it reads
        // it; until then a checkpoint is a silent no-op.
        try c.execute("PRAGMA journal_mode=WAL")
        let connection = ConnectionHandOver(c)
        let thread = Thread { [stopping, done] in
            Checkpointer.run(connection.take(), every: everyMillis, until: stopping)
            // The connection is closed by now: `stop()` returns with the
            // database closed (the last connection to close removes the WAL).
            done.signal()
        }
        thread.name = "guildhall-checkpoint"
        thread.start()
    }

    private static func run(_ db: SQLiteConnection, every millis: Int, until stopping: DispatchSemaphore) {
        while stopping.wait(timeout: .now() + .milliseconds(millis)) == .timedOut {
            // Busy (another checkpoint) or nothing to copy: the next round tries again.
            _ = sqlite3_wal_checkpoint_v2(db.db, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        }
    }

    func stop() {
        stopping.signal()
        done.wait()
    }
}
