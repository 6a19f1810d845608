// The seam between the writer and a cluster's log (docs/cluster.md). Without a
// journal, SQLite is the log and a job is durable once committed here. With
// one, each job is first appended to its shard's log, and committed here
// only after the log has it; the job's writes then commit together with the
// log position they were stored at, so a restart knows where to catch up.
// Jobs whose writes name no shard (retention, barriers) are this node's
// alone and are not logged. The writer thread calls `append` and may block
// in it. Values and one protocol.

/// Where a job's writes go: per write, the shard whose log carries it (nil:
/// not logged); and per shard, the generation of the shard's state the job
/// was made from (each takeover is a new generation: a job made from an
/// earlier one is refused, as its seqs may repeat or skip).
public struct JobShards: Sendable, Equatable {
    public let shards: [Int?]
    public let generations: [Int: UInt64]
    public init(_ shards: [Int?], generations: [Int: UInt64] = [:]) { self.shards = shards; self.generations = generations }
}

/// One stored log entry to apply: its shard, its stream sequence, its writes.
public struct LoggedWrites: Sendable {
    public let shard: Int
    public let seq: UInt64
    public let writes: [StoreWrite]
    public init(shard: Int, seq: UInt64, writes: [StoreWrite]) { self.shard = shard; self.seq = seq; self.writes = writes }
}

public protocol Journal: Sendable {
    /// Appends `jobs` to their shards' logs. Per job, in order: the positions
    /// to record with it (shard, stream sequence), or why it was not appended
    /// (the job then fails and is not committed here).
    func append(_ jobs: [WriteJob]) -> [Result<[LoggedPosition], StoreError>]
}

/// A shard's log position a committed job moves this database to.
public struct LoggedPosition: Sendable, Equatable {
    public let shard: Int
    public let seq: UInt64
    public init(shard: Int, seq: UInt64) { self.shard = shard; self.seq = seq }
}
