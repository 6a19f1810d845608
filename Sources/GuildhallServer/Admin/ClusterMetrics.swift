// A cluster node's own metrics (docs/operating.md, "Metrics"): whether it
// reaches NATS, the shards it serves, and its log appends' latency and
// failures. Registered only on a node of a cluster. The appends are timed on
// the writer thread (ShardLog.append); the gauges are read at the scrape.
// Any thread.

import Prometheus

final class ClusterMetrics: Sendable {
    let appendLatency: ValueHistogram
    let appendFailures: Counter
    private let natsConnected, shardsServed, shardsHeld: Gauge

    init(_ registry: PrometheusCollectorRegistry) {
        appendLatency = registry.valueHistogram(name: "guildhall_cluster_log_append_seconds",
                                                buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
                                                help: "Time to append one shard's entry to its JetStream log, until stored and acknowledged.")
        appendFailures = registry.counter(name: "guildhall_cluster_log_append_failures_total",
                                          help: "Log appends that failed (NATS unreachable, the shard moved or taken by another node).")
        natsConnected = registry.gauge(name: "guildhall_cluster_nats_connected", help: "1 while the node's lease connection to NATS is up.")
        shardsServed = registry.gauge(name: "guildhall_cluster_shards_owned", help: "Shards this node holds and serves.")
        shardsHeld = registry.gauge(name: "guildhall_cluster_shards_catching_up",
                                    help: "Shards this node holds but does not serve yet (catching up from their logs).")
    }

    /// Reads the figures now.
    func update(_ readiness: ClusterReadiness) {
        natsConnected.set(to: readiness.natsConnected ? 1 : 0)
        shardsServed.set(to: Double(readiness.serving))
        shardsHeld.set(to: Double(readiness.catchingUp))
    }
}

/// Whether a cluster node can serve (GET /readyz), from its leases and logs.
struct ClusterReadiness {
    var natsConnected = false
    /// Shards held whose lease was renewed in time and whose log this node caught up with.
    var serving = 0
    /// Shards held but not served yet: catching up, or a renewal overdue.
    var catchingUp = 0
    /// Why not, when the node cannot serve.
    var problem: String?

    init(leases: ShardLeases, log: ShardLog?) {
        let s = leases.snapshot, caughtUp = log?.positions ?? [:]
        natsConnected = leases.isConnected
        for shard in s.held.keys {
            if leases.owns(shard) && caughtUp[shard] != nil { serving += 1 } else { catchingUp += 1 }
        }
        if !natsConnected {
            problem = "NATS unreachable" + (s.lastError.isEmpty ? "" : ": \(s.lastError)")
        } else if !leases.roundsOnTime {
            problem = "shard leases not renewed in time"
        } else if catchingUp > 0 {
            problem = "\(catchingUp) shard(s) held but not caught up"
        }
    }
}
