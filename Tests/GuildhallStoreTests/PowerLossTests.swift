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
    /// "NORMAL+journal": sends journaled ahead of SQLite where the writer is not
    /// far behind (LocalJournal.swift), as a quiet loop's are; NORMAL's promise holds.
    /// The runs go on a thread of their own: they take a while and only wait
    /// on the store's threads, and a test function blocking one of the few
    /// threads Swift's concurrency has (two on two cores) stalled the other
    /// tests' clients for as long (a cluster test then timed out).
    @Test(arguments: ["FULL", "NORMAL", "NORMAL+journal"])
    func aPowerLossKeepsWhatTheSynchronousSettingPromises(_ mode: String) async throws {
        // Expectations need the test's task, so the thread returns what it found wrong.
        let problems: Result<[String], any Error> = await withCheckedContinuation { done in
            Thread { done.resume(returning: Result { try Self.cutThePower(mode) }) }.start()
        }
        let found = try problems.get()
        #expect(found.isEmpty, "\(found.count) problems: \(found.prefix(5))")
    }

    /// Every problem found, as text.
    static func cutThePower(_ mode: String) throws -> [String] {
        var problems: [String] = []
        func expect(_ ok: Bool, _ what: @autoclosure () -> String) { if !ok { problems.append(what()) } }
        let synchronous = String(mode.prefix { $0 != "+" }), journaled = mode.hasSuffix("+journal")
        expect(powerloss_install() == 0, "the test VFS did not install")
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
            var options = StoreOptions(folder: folder, synchronous: synchronous, maxBatch: 8, checkpointMillis: 10)
            options.journalCodec = journaled ? testCodec : nil
            options.journalAhead = journaled
            let store = try Store(options, onCommitted: { o in reports.outcomes.withLock { $0 += o } }, onRead: { _ in })
            let total = 50 + Int(random.next() % 250)
            for seq in 1...total {
                let job = WriteJob(ticket: UInt64(seq), writes: [.message(message(seq: UInt64(seq), text: String(repeating: "p", count: 200)))])
                if journaled, let answered = store.writer.journalIfIdle([job]) {
                    store.writer.wakeForJournal()
                    reports.outcomes.withLock { $0 += answered }
                } else {
                    store.writer.submit(job)
                }
            }
            // The power goes at a random point: after some acknowledgements, while more are on their way.
            let waitFor = Int(random.next() % UInt64(total))
            _ = reports.waitOutcomes(waitFor)
            let acknowledged = reports.outcomes.withLock { Set($0.filter { $0.error == nil }.map(\.ticket)).count }
            let result = powerloss_snapshot(image)
            store.close()
            guard result >= 0 else { return problems + ["run \(run): the snapshot failed"] }
            undone += result
            // What the machine boots with, opened as the server opens it (a power loss before
            // the schema was first synced leaves an empty file, which the migration fills).
            let integrity = try Store.integrityCheck(image + "/guildhall.db")
            expect(integrity == "ok", "run \(run) (seed \(seed)): \(integrity)")
            var reopen = StoreOptions(folder: image)
            reopen.journalCodec = journaled ? testCodec : nil
            try Store(reopen, onCommitted: { _ in }, onRead: { _ in }).close()
            let db = try SQLiteConnection(path: image + "/guildhall.db")
            let rows = try db.prepare("SELECT seq FROM messages ORDER BY seq", persistent: false)
            var kept: [UInt64] = []
            while try rows.step() { kept.append(rows.uint(0)) }
            // Commits are in submission order: what survives is always a prefix of the sends.
            expect(kept == (0..<kept.count).map { UInt64($0 + 1) }, "run \(run) (seed \(seed)): a hole in \(kept)")
            if synchronous == "FULL" {
                expect(kept.count >= acknowledged, "run \(run) (seed \(seed)): \(acknowledged) acknowledged, \(kept.count) kept")
            } else if kept.count < acknowledged {
                lostTails += 1
            }
        }
        print("power loss, \(mode), seed \(seed): 100 runs, \(undone) unsynced writes undone, acknowledged tails lost in \(lostTails)")
        return problems
    }
}
