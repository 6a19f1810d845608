// One commit round's decisions about a cluster's logs (ShardLog.append),
// apart from the appending itself so they can be tested directly. Pure.
//
// 1. Parts: each shard gets one entry with the writes of the round's jobs
//    that name it, in order; a job made from an earlier takeover's state of
//    any of its shards (an older generation) is refused whole instead.
// 2. Settling: a job succeeds when every entry it is in was appended. A job
//    that failed may still be in another shard's appended entry, beside jobs
//    that did not fail; none of that entry's jobs is committed here then
//    (they fail too, which may spread to further entries), and the shard is
//    broken: the node reloads it from its log before serving it again, so
//    what the log holds and what the node remembers never differ.

import GuildhallStore

struct LogRound {
    /// Each shard's entry: its writes, and the jobs (by index) with a part in it.
    var parts: [Int: (writes: [StoreWrite], jobs: [Int])] = [:]
    /// Jobs that failed, by index.
    var failures: [Int: StoreError] = [:]

    init(_ jobs: [WriteJob], generations current: [Int: UInt64]) {
        for (i, job) in jobs.enumerated() {
            guard let g = job.shards?.generations, g.contains(where: { current[$0.key] != $0.value }) else { continue }
            failures[i] = StoreError(code: -2, message: "the shard moved since this change was made; retry")
        }
        for (i, job) in jobs.enumerated() where failures[i] == nil {
            guard let shards = job.shards else { continue }
            for (write, shard) in zip(job.writes, shards.shards) {
                guard let shard else { continue }
                parts[shard, default: ([], [])].writes.append(write)
                if parts[shard]!.jobs.last != i { parts[shard]!.jobs.append(i) }
            }
        }
    }

    /// Given which entries were appended (shard -> stream sequence) and why
    /// the others were not, the jobs' outcomes and the broken shards.
    func settle(_ outcomes: [Int: Result<UInt64, StoreError>], jobs count: Int)
        -> (results: [Result<[LoggedPosition], StoreError>], broken: Set<Int>) {
        var failures = self.failures
        var positions = Array(repeating: [LoggedPosition](), count: count)
        var appended: [Int: [Int]] = [:]
        for (shard, part) in parts {
            switch outcomes[shard] ?? .failure(StoreError(code: -4, message: "shard \(shard)'s entry was not sent")) {
            case .success(let seq):
                appended[shard] = part.jobs
                for j in part.jobs { positions[j].append(LoggedPosition(shard: shard, seq: seq)) }
            case .failure(let error): for j in part.jobs where failures[j] == nil { failures[j] = error }
            }
        }
        var broken: Set<Int> = []
        var spreading = true
        while spreading {
            spreading = false
            for (shard, members) in appended where !broken.contains(shard) && members.contains(where: { failures[$0] != nil }) {
                broken.insert(shard)
                spreading = true
                for j in members where failures[j] == nil {
                    failures[j] = StoreError(code: -4, message: "shard \(shard) is reloading from its log; retry")
                }
            }
        }
        for i in 0..<count { positions[i].sort { $0.shard < $1.shard } }
        return ((0..<count).map { i in failures[i].map { .failure($0) } ?? .success(positions[i]) }, broken)
    }
}
