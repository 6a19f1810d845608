// LogRound: one commit round's entries per shard, and what their appends
// mean for each job (LogRound.swift), without NATS.

import GuildhallCore
import GuildhallStore
import Testing
@testable import GuildhallServer

@Suite struct LogRoundTests {
    static func job(_ ticket: UInt64, _ shards: [Int?], generations: [Int: UInt64] = [:]) -> WriteJob {
        WriteJob(ticket: ticket, writes: shards.map { _ in .syncCursor("u", "d", ticket) }, shards: JobShards(shards, generations: generations))
    }

    static let fail = StoreError(code: -4, message: "no answer")

    @Test func eachShardGetsOneEntryWithItsJobsWritesInOrder() {
        let jobs = [Self.job(1, [3, 5]), Self.job(2, [5]), Self.job(3, [nil]), WriteJob(ticket: 4, writes: [.pruneInbox(before: 1)])]
        let round = LogRound(jobs, generations: [:])
        #expect(round.parts.keys.sorted() == [3, 5])
        #expect(round.parts[3]!.jobs == [0] && round.parts[5]!.jobs == [0, 1])
        #expect(round.parts[5]!.writes == [.syncCursor("u", "d", 1), .syncCursor("u", "d", 2)])
        let (results, broken) = round.settle([3: .success(10), 5: .success(11)], jobs: jobs.count)
        #expect(broken.isEmpty)
        #expect((try? results[0].get()) == [LoggedPosition(shard: 3, seq: 10), LoggedPosition(shard: 5, seq: 11)])
        #expect((try? results[1].get()) == [LoggedPosition(shard: 5, seq: 11)])
        #expect((try? results[2].get()) == [] && (try? results[3].get()) == [], "jobs naming no shard are this node's alone")
    }

    @Test func aJobMadeFromAnEarlierTakeoverIsRefusedWhole() {
        let jobs = [Self.job(1, [3, 5], generations: [3: 2, 5: 1]), Self.job(2, [5], generations: [5: 2])]
        let round = LogRound(jobs, generations: [3: 2, 5: 2])
        #expect(round.failures.keys.sorted() == [0])
        #expect(round.parts.keys.sorted() == [5] && round.parts[5]!.jobs == [1], "none of its writes is logged")
    }

    /// Job 0 is in shards 3 and 5; shard 5's entry fails. Shard 3's entry was
    /// appended with job 0's writes and job 1's: both fail and shard 3 reloads;
    /// job 1 is also in shard 7's entry, which breaks too; job 2 (shard 9) is untouched.
    @Test func aFailureSpreadsToEveryEntryAFailedJobIsIn() {
        let jobs = [Self.job(1, [3, 5]), Self.job(2, [3, 7]), Self.job(3, [9])]
        let round = LogRound(jobs, generations: [:])
        let (results, broken) = round.settle([3: .success(10), 5: .failure(Self.fail), 7: .success(12), 9: .success(13)], jobs: 3)
        #expect(broken == [3, 7])
        #expect(results.map { (try? $0.get()) != nil } == [false, false, true])
        #expect((try? results[2].get()) == [LoggedPosition(shard: 9, seq: 13)])
    }
}
