// The search index's own thread (SearchIndex.swift): woken by the writer
// after a transaction that queued messages (and every quarter second in any
// case), it applies the queue to search.db in batches and publishes how far
// it got; a search waits on that before it reads the index. The store's
// threads share it: the writer wakes it and reads its progress to prune the
// queue, the reader waits on it. The thread runs under SCHED_IDLE, on
// what the cores would otherwise leave idle: when they are all busy, sends
// and their fan-out go first and the index catches up once they leave room
// (a search meanwhile waits for it, up to its deadline, and is answered 503
// past that); with a core to spare it keeps up within the writer's next
// commit.

import Foundation
import GuildhallCore

public final class SearchIndexer: @unchecked Sendable {
    // Every field is read and written under `condition` (the unchecked conformance rests on that).
    private let condition = NSCondition()
    private var progress: UInt64 = 0
    private var woken = false, stopping = false, running = false
    private let done = DispatchSemaphore(value: 0)
    /// Queue rows applied per search.db transaction.
    static let batch = 4096

    /// Opens search.db in `folder`, rebuilds it if it must be (new; ahead of the
    /// queue, or behind what the queue still holds: not this database's index,
    /// as when a backup was restored beside it), and starts the thread.
    init(folder: String, mainPath: String) throws(StoreError) {
        let index = try SearchIndex(folder: folder, mainPath: mainPath)
        let main = try SQLiteConnection(path: mainPath, readOnly: true)
        let sequence = UInt64(try main.scalar("SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'search_queue'), 0)"))
        // Rows are pruned only once this database's index applied them: an index short of the oldest left missed some.
        let oldest = UInt64(try main.scalar("SELECT COALESCE(MIN(seq), 0) FROM search_queue"))
        if let applied = try index.applied(), applied <= sequence, oldest == 0 || applied + 1 >= oldest {
            progress = applied
        } else {
            progress = try index.rebuild()
        }
        running = true
        let box = IndexHandOver(index)
        NamedThread.start("gh-search") { [self] in
            // This thread only (0 names the calling thread): it runs when a core would otherwise idle.
            var idle = sched_param()
            _ = sched_setscheduler(0, 5 /* SCHED_IDLE */, &idle)
            run(box.take())
            done.signal()
        }
    }

    /// The writer committed queue rows.
    func wake() {
        condition.lock()
        woken = true
        condition.signal()
        condition.unlock()
    }

    /// The last queue seq applied to the index.
    var applied: UInt64 {
        condition.lock()
        defer { condition.unlock() }
        return progress
    }

    /// Waits until the index holds queue row `seq`, or until `deadline`; whether it does.
    func wait(for seq: UInt64, until deadline: Date) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        woken = true
        condition.broadcast()
        while progress < seq {
            guard running, condition.wait(until: deadline) || progress >= seq else { return progress >= seq }
        }
        return true
    }

    private func run(_ index: SearchIndex) {
        while true {
            condition.lock()
            if !woken && !stopping { _ = condition.wait(until: Date().addingTimeInterval(0.25)) }
            let stop = stopping
            woken = false
            let from = progress
            condition.unlock()
            var at = from
            do {
                while true {
                    let next = try index.catchUp(after: at, limit: Self.batch)
                    if next == at { break }
                    at = next
                    condition.lock()
                    progress = at
                    condition.broadcast()
                    condition.unlock()
                }
            } catch {
                // Tried again at the next wake; searches meanwhile wait to their deadline.
                Thread.sleep(forTimeInterval: 0.1)
            }
            if stop { break }
        }
        condition.lock()
        running = false
        condition.broadcast()
        condition.unlock()
    }

    /// Applies what is queued, then stops the thread.
    func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
        done.wait()
    }
}

/// Hands the index's connections to the thread that uses them from then on.
private final class IndexHandOver: @unchecked Sendable {
    private var index: SearchIndex?
    init(_ index: SearchIndex) { self.index = index }
    func take() -> SearchIndex {
        defer { index = nil }
        return index!
    }
}
