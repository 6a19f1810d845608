// Each shard's durable log in a cluster (docs/cluster.md): a
// JetStream stream with one subject per shard, `gh.<cluster>.log.<shard>`.
// The owner of a shard sequences its writes; every commit round appends one
// entry per shard it touches, carrying
//   - `ExpectLastSubjectSeq`: the sequence of the shard's previous entry,
//     so a deposed owner's late write is refused by the stream itself;
//   - a `MsgId` unique to the entry, so a retry after a lost answer is
//     stored once (JetStream answers it as a duplicate, with the first seq).
// A job is committed to SQLite, and so acknowledged, only after the stream
// took every entry it has a part in. A node that takes a shard over first
// applies the entries its SQLite lacks (from its recorded log position on,
// so an empty data folder rebuilds the shard from the log), then appends an
// epoch marker the same way before it serves: from then on the previous
// owner's writes cannot land. Entries: Proto/log.proto (LogEntries.swift).
// Blocking cnats calls: the writer thread (`append`) and the lease thread
// (`adopt`, `release`) only, never a loop.

import CNATS
import Foundation
import GuildhallCore
import GuildhallStore
import Synchronization

final class ShardLog: Journal {
    private let settings: Settings
    private let link: ClusterConnection
    private let store: Store
    private let leases: @Sendable (Int) -> Bool
    private let log: ServerLog
    /// Append latency and failures (a cluster node's metrics).
    private let metrics: ClusterMetrics?
    let streamName: String
    private let subjectPrefix: String
    /// Per shard served: the stream sequence of its last entry (the next entry's expectation).
    private let last = Mutex<[Int: UInt64]>([:])
    /// Per shard, how many times this node took it over (JobShards.generations).
    private let generations = Mutex<[Int: UInt64]>([:])
    /// Makes MsgIds unique per process: node, start time, counter.
    private let incarnation = UInt64(Date().timeIntervalSince1970 * 1000)
    private let counter = Atomic<UInt64>(0)
    /// Told when an append failed without an answer: what the home holds for
    /// the shard may now be ahead of its log (seqs handed out to writes the log
    /// may lack), so the node reloads the shard from the log before it serves it again.
    let onBroken = Mutex<(@Sendable (Int) -> Void)?>(nil)
    /// How long a commit round retries an entry the stream did not answer (a leader election takes about 5 s).
    private let retryMs: UInt64 = 6_000

    /// Connects and makes sure the stream exists; `leases` says whether the lease of a shard is still held.
    init(settings: Settings, store: Store, log: ServerLog, metrics: ClusterMetrics? = nil, leases: @escaping @Sendable (Int) -> Bool) throws {
        self.settings = settings
        self.metrics = metrics
        self.store = store
        self.leases = leases
        self.log = log
        link = try ClusterConnection(settings: settings, role: "log", waitMs: 2_000)
        streamName = "GH-LOG-\(settings.clusterName)"
        subjectPrefix = "gh.\(settings.clusterName).log."
        // NATS servers started together answer before JetStream has elected its leader: wait for it a little.
        let deadline = ShardLeases.nowMs() + 10_000
        while true {
            do {
                try ensureStream()
                break
            } catch {
                guard ShardLeases.nowMs() < deadline else {
                    link.close()
                    throw error
                }
                usleep(250_000)
            }
        }
    }

    func close() { link.close() }

    func subject(_ shard: Int) -> String { subjectPrefix + String(shard) }

    private func ensureStream() throws {
        var cfg = jsStreamConfig()
        jsStreamConfig_Init(&cfg)
        let name = strdup(streamName), pattern = strdup(subjectPrefix + "*")
        defer { free(name); free(pattern) }
        cfg.Name = UnsafePointer(name)
        var subjects: [UnsafePointer<CChar>?] = [UnsafePointer(pattern)]
        var err = jsErrCode(0)
        let s = subjects.withUnsafeMutableBufferPointer { list -> natsStatus in
            cfg.Subjects = list.baseAddress
            cfg.SubjectsLen = 1
            cfg.Storage = js_FileStorage
            cfg.Replicas = Int64(settings.clusterReplicas)
            cfg.Duplicates = 120 * 1_000_000_000  // two minutes, in nanoseconds
            var info: UnsafeMutablePointer<jsStreamInfo>?
            let s = js_AddStream(&info, link.jetStream, &cfg, nil, &err)
            if let info { jsStreamInfo_Destroy(info) }
            return s
        }
        guard s == NATS_OK || err == JSStreamNameExistErr else {
            throw SettingsError(description: "cannot make the log stream \(streamName): \(ClusterConnection.text(s)) \(ClusterConnection.lastErrorText())")
        }
    }

    var served: Set<Int> { last.withLock { Set($0.keys) } }

    /// Per shard, the generation of its state this node serves (JobShards.generations).
    var currentGenerations: [Int: UInt64] { generations.withLock { $0 } }

    /// Per shard served, the stream sequence of its last entry.
    var positions: [Int: UInt64] { last.withLock { $0 } }

    // MARK: Appending (writer thread)

    func append(_ jobs: [WriteJob]) -> [Result<[LoggedPosition], StoreError>] {
        let round = LogRound(jobs, generations: generations.withLock { $0 })
        var outcomes: [Int: Result<UInt64, StoreError>] = [:]
        for shard in round.parts.keys.sorted() {
            let started = DispatchTime.now().uptimeNanoseconds
            let outcome = appendEntry(LogEntry(node: settings.nodeID, epoch: false, writes: round.parts[shard]!.writes), to: shard)
            outcomes[shard] = outcome
            if case .failure = outcome { metrics?.appendFailures.increment() } else {
                metrics?.appendLatency.record(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
            }
        }
        let (results, broken) = round.settle(outcomes, jobs: jobs.count)
        for shard in broken.sorted() {
            last.withLock { _ = $0.removeValue(forKey: shard) }
            onBroken.withLock { $0 }?(shard)
        }
        return results
    }

    /// Appends `entry` after the shard's last entry; retries an unanswered
    /// publish with the same MsgId while the lease holds, up to `retryMs`.
    private func appendEntry(_ entry: LogEntry, to shard: Int) -> Result<UInt64, StoreError> {
        guard leases(shard), let expected = last.withLock({ $0[shard] }) else {
            return .failure(StoreError(code: -2, message: "shard \(shard) is not served by this node"))
        }
        let result = publish(entry, shard: shard, expecting: expected, retrying: true)
        switch result {
        case .success(let seq): last.withLock { $0[shard] = seq }
        case .failure(let e) where e.code == -3 || e.code == -4:
            last.withLock { _ = $0.removeValue(forKey: shard) }
            onBroken.withLock { $0 }?(shard)
        case .failure: break
        }
        return result
    }

    /// Publishes one entry expecting the subject's last sequence to be `expected`
    /// (0: no entry yet). Code -3: refused, another node appended since (deposed).
    private func publish(_ entry: LogEntry, shard: Int, expecting expected: UInt64, retrying: Bool) -> Result<UInt64, StoreError> {
        let data: [UInt8]
        do { data = try LogEntries.encode(entry) } catch {
            return .failure(StoreError(code: -1, message: "cannot encode a log entry: \(error)"))
        }
        let id = "\(settings.nodeID).\(incarnation).\(counter.add(1, ordering: .relaxed).newValue)"
        let started = ShardLeases.nowMs()
        var lastError = ""
        while true {
            var opts = jsPubOptions()
            jsPubOptions_Init(&opts)
            opts.MaxWait = 2_000
            var ack: UnsafeMutablePointer<jsPubAck>?
            var err = jsErrCode(0)
            let s = id.withCString { idPointer -> natsStatus in
                opts.MsgId = idPointer
                if expected == 0 { opts.ExpectNoMessage = true } else { opts.ExpectLastSubjectSeq = expected }
                return data.withUnsafeBytes { bytes in
                    js_Publish(&ack, link.jetStream, subject(shard), bytes.baseAddress, Int32(bytes.count), &opts, &err)
                }
            }
            if s == NATS_OK, let ack {
                defer { jsPubAck_Destroy(ack) }
                return .success(ack.pointee.Sequence)
            }
            if err == JSStreamWrongLastSequenceErr {
                log.warn("log append refused: another node took the shard over", ["shard": shard])
                return .failure(StoreError(code: -3, message: "shard \(shard) moved to another node"))
            }
            lastError = "\(ClusterConnection.text(s)) \(err.rawValue) \(ClusterConnection.lastErrorText())"
            guard retrying, ShardLeases.nowMs() < started + retryMs, leases(shard) else { break }
            usleep(100_000)
        }
        log.warn("log append failed", ["shard": shard, "error": lastError])
        return .failure(StoreError(code: -4, message: "the log did not take shard \(shard)'s entry: \(lastError)"))
    }

    // MARK: Taking a shard over (lease thread)

    /// Brings this node's SQLite up to the shard's last entry, then appends
    /// an epoch marker; the generation of the shard's state from now on, or
    /// nil when it may not be served.
    func adopt(_ shard: Int, keepAlive: () -> Void = {}) -> UInt64? {
        do {
            let applied = try store.logPositions()[shard] ?? 0
            let tail = try lastSequence(of: shard)
            if tail > applied { try catchUp(shard, after: applied, through: tail, keepAlive: keepAlive) }
            switch publish(LogEntry(node: settings.nodeID, epoch: true, writes: []), shard: shard, expecting: tail, retrying: false) {
            case .success(let seq):
                let errors = store.writer.applyLogged([LoggedWrites(shard: shard, seq: seq, writes: [])])
                guard errors.isEmpty else { throw errors[0] }
                let generation = generations.withLock { g in
                    g[shard, default: 0] += 1
                    return g[shard]!
                }
                last.withLock { $0[shard] = seq }
                return generation
            case .failure(let error): throw error
            }
        } catch {
            log.warn("shard not taken over", ["shard": shard, "error": String(describing: error)])
            return nil
        }
    }

    /// Stops appending to `shard` (its lease is gone or given back).
    func release(_ shard: Int) { last.withLock { _ = $0.removeValue(forKey: shard) } }

    /// The stream sequence of the shard's last entry, 0 when it has none.
    private func lastSequence(of shard: Int) throws -> UInt64 {
        var msg: OpaquePointer?
        var err = jsErrCode(0)
        let s = js_GetLastMsg(&msg, link.jetStream, streamName, subject(shard), nil, &err)
        if s == NATS_NOT_FOUND || err == JSNoMessageFoundErr { return 0 }
        guard s == NATS_OK, let msg else {
            throw StoreError(code: -4, message: "cannot read shard \(shard)'s log: \(ClusterConnection.text(s)) \(ClusterConnection.lastErrorText())")
        }
        defer { natsMsg_Destroy(msg) }
        return natsMsg_GetSequence(msg)
    }

    /// Applies the shard's entries after `applied` up to `tail`, read with an ordered consumer.
    private func catchUp(_ shard: Int, after applied: UInt64, through tail: UInt64, keepAlive: () -> Void) throws {
        var opts = jsSubOptions()
        jsSubOptions_Init(&opts)
        opts.Ordered = true
        opts.Config.DeliverPolicy = js_DeliverByStartSequence
        opts.Config.OptStartSeq = applied + 1
        var sub: OpaquePointer?
        var err = jsErrCode(0)
        var s = js_SubscribeSync(&sub, link.jetStream, subject(shard), nil, &opts, &err)
        guard s == NATS_OK, let sub else {
            throw StoreError(code: -4, message: "cannot read shard \(shard)'s log: \(ClusterConnection.text(s)) \(ClusterConnection.lastErrorText())")
        }
        defer { natsSubscription_Destroy(sub) }
        var batch: [LoggedWrites] = []
        var reached = applied
        var count = 0
        while reached < tail {
            var msg: OpaquePointer?
            s = natsSubscription_NextMsg(&msg, sub, 5_000)
            guard s == NATS_OK, let msg else {
                throw StoreError(code: -4, message: "shard \(shard)'s log stopped at \(reached) of \(tail): \(ClusterConnection.text(s))")
            }
            defer { natsMsg_Destroy(msg) }
            var meta: UnsafeMutablePointer<jsMsgMetaData>?
            guard natsMsg_GetMetaData(&meta, msg) == NATS_OK, let meta else { continue }
            let seq = meta.pointee.Sequence.Stream
            jsMsgMetaData_Destroy(meta)
            let length = Int(natsMsg_GetDataLength(msg))
            let data = natsMsg_GetData(msg).map { p in p.withMemoryRebound(to: UInt8.self, capacity: length) { [UInt8](UnsafeBufferPointer(start: $0, count: length)) } } ?? []
            let entry: LogEntry
            do { entry = try LogEntries.decode(data) } catch {
                log.error("log entry not readable; skipped", ["shard": shard, "seq": seq, "error": String(describing: error)])
                entry = LogEntry(node: 0, epoch: false, writes: [])
            }
            batch.append(LoggedWrites(shard: shard, seq: seq, writes: entry.writes))
            reached = seq
            count += 1
            if batch.count >= 500 || reached >= tail {
                for error in store.writer.applyLogged(batch) { log.error("log entry not applied", ["shard": shard, "error": error.description]) }
                batch.removeAll(keepingCapacity: true)
                keepAlive()
            }
        }
        log.info("shard caught up from its log", ["shard": shard, "entries": count, "through": tail])
    }
}
