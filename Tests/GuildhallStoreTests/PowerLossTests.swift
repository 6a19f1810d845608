// docs/reliability.md D3: power loss, simulated by the test VFS in CPowerLoss (every
// write since a file's last sync undone, as SQLite's crash tests do). Sends
// are committed one per job while the store runs; at a random moment the
// disk's state is taken as a machine losing power would boot with it, and
// opened. With synchronous=FULL every acknowledged message is there; with
// NORMAL the database is consistent and what is lost is only a tail of the
// last commits (docs/operating.md, "Durability"). 100 runs each, seed logged.

import CPowerLoss
import Foundation
import Testing
@testable import GuildhallCore
@testable import GuildhallStore

@Suite(.serialized) struct PowerLossTests {
    @Test(arguments: ["FULL", "NORMAL"])
    func aPowerLossKeepsWhatTheSynchronousSettingPromises(_ synchronous: String) throws {
        #expect(powerloss_install() == 0)
        defer { powerloss_watch(nil) }
        let seed = UInt64.random(in: 1...UInt64.max)
        var random = SeededRandom(seed: seed)
        var lostTails = 0, undone = 0
        for run in 0..<100 {
            let folder = temporaryFolder(), image = temporaryFolder()
            defer {
                try? FileManager.default.removeItem(atPath: folder)
                try? FileManager.default.removeItem(atPath: image)
            }
            powerloss_watch(folder)
            let reports = Reports()
            let store = try Store(StoreOptions(folder: folder, synchronous: synchronous, maxBatch: 8, checkpointMillis: 10),
                                  onCommitted: { o in reports.outcomes.withLock { $0 += o } }, onRead: { _ in })
            let total = 50 + Int(random.next() % 250)
            for seq in 1...total {
                store.writer.submit(WriteJob(ticket: UInt64(seq), writes: [.message(message(seq: UInt64(seq), text: String(repeating: "p", count: 200)))]))
            }
            // The power goes at a random point: after some acknowledgements, while more are on their way.
            let waitFor = Int(random.next() % UInt64(total))
            _ = reports.waitOutcomes(waitFor)
            let acknowledged = reports.outcomes.withLock { $0.filter { $0.error == nil }.count }
            let result = powerloss_snapshot(image)
            store.close()
            try #require(result >= 0, "run \(run): the snapshot failed")
            undone += result
            // What the machine boots with, opened as the server opens it (a power loss before
            // the schema was first synced leaves an empty file, which the migration fills).
            let integrity = try Store.integrityCheck(image + "/guildhall.db")
            #expect(integrity == "ok", "run \(run) (seed \(seed)): \(integrity)")
            try Store(StoreOptions(folder: image), onCommitted: { _ in }, onRead: { _ in }).close()
            let db = try SQLiteConnection(path: image + "/guildhall.db")
            let rows = try db.prepare("SELECT seq FROM messages ORDER BY seq", persistent: false)
            var kept: [UInt64] = []
            while try rows.step() { kept.append(rows.uint(0)) }
            // Commits are in submission order: what survives is always a prefix of the sends.
            #expect(kept == (0..<kept.count).map { UInt64($0 + 1) }, "run \(run) (seed \(seed)): a hole in \(kept)")
            if synchronous == "FULL" {
                #expect(kept.count >= acknowledged, "run \(run) (seed \(seed)): \(acknowledged) acknowledged, \(kept.count) kept")
            } else if kept.count < acknowledged {
                lostTails += 1
            }
        }
        print("power loss, synchronous=\(synchronous), seed \(seed): 100 runs, \(undone) unsynced writes undone, acknowledged tails lost in \(lostTails)")
    }
}
