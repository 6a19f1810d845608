// The node's metrics in Prometheus's text format (docs/operating.md), through
// swift-prometheus's registry, by Prometheus's conventions: counters end in
// _total, units in the name, label values in snake_case. Counters are bumped
// where the events happen but never per delivery: a fan-out adds its count
// once per event per gateway. Gauges (sessions, queued bytes, store queue)
// are read when scraped: each loop leaves its numbers in `LoopFigures` at
// its liveness sweep. Any thread; the registry is thread-safe.

import Foundation
import GuildhallCore
import GuildhallWire
import Prometheus
import Synchronization

final class NodeMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()

    let messagesChannel, messagesDirect, operations: Counter
    let deliveries, gapsFetched: Counter
    let slowConsumerHard, slowConsumerSoft, slowConsumerStall, slowConsumerTotal: Counter
    let logins, resumesReplayed, resumesFellBack: Counter
    private let loginFailures: Mutex<[String: Counter]> = Mutex([:])
    private let closes: Mutex<[String: Counter]> = Mutex([:])
    private let phases: [String: Gauge]
    let commitLatency: ValueHistogram
    let commitBatch: ValueHistogram
    let publisherPauses: ValueHistogram
    let syncPackages, syncItems: Counter
    let receiptRequests, receiptResponses: Counter
    let eventsShed: Counter
    let jobsCommittedOnLoop: Counter
    let commitFailures: Counter
    private let sweptUnsent, sweptRemoved, sweptBlobs: Counter
    /// Push (PushGateway.swift): notices the gateway took, posts tried again, notices given up.
    let pushesSent, pushRetries, pushesDropped: Counter
    private let uploads, uploadedBytes, downloads, downloadedBytes: Counter
    private let errors: Mutex<[String: Counter]> = Mutex([:])
    private let refusals: Mutex<[String: Counter]> = Mutex([:])
    private let fileRefusals: Mutex<[String: Counter]> = Mutex([:])
    private let storedFiles, storedFileBytes: Gauge

    private let sessions, connections, outboundBytes, outboundPeak, storeQueue: Gauge
    private let process: ProcessMetrics
    private let allocator: AllocatorMetrics
    /// On a node of a cluster: NATS, shards and log appends.
    let cluster: ClusterMetrics?
    /// Per loop, as of its last sweep: sessions, queued outbound bytes, busy
    /// seconds, and its home's subscriptions by type (SubscriptionKind raw value).
    let loops: Mutex<[LoopFigures]>
    struct LoopFigures: Sendable {
        var sessions = 0
        var syncing = 0
        var detached = 0
        /// The same three counts for sessions over WebSocket (the rest are TCP).
        var webSocket = (sessions: 0, syncing: 0, detached: 0)
        var outbound = 0
        var outboundPeak = 0
        var busySeconds = 0.0
        var subscriptions: [Int: Int] = [:]
        /// The loop time of the sweep that wrote these figures: a loop that
        /// stops turning stops writing, and /healthz says so.
        var lastSweep: UInt64 = 0
    }
    /// Per loop, its requests timed by kind, as of its last sweep.
    private let requestDurations: Mutex<[RequestDurations.Snapshot]>
    private let busy: [Counter]
    /// Per loop, the busy seconds already added to its counter.
    private let busyReported: Mutex<[Double]>
    private let subscriptionGauges: [Int: Gauge]
    private let walBytes: Gauge

    init(loops count: Int, clustered: Bool = false) {
        loops = Mutex(Array(repeating: LoopFigures(), count: count))
        let registry = self.registry
        busy = (0..<count).map {
            registry.counter(name: "guildhall_loop_busy_seconds_total", labels: [("loop", String($0))],
                             help: "Seconds each loop spent working: its thread's CPU time (it waits in poll otherwise); its rate is the loop's utilisation.")
        }
        busyReported = Mutex(Array(repeating: 0, count: count))
        requestDurations = Mutex(Array(repeating: [:], count: count))
        var subs: [Int: Gauge] = [:]
        for kind in SubscriptionKind.allCases {
            subs[kind.rawValue] = registry.gauge(name: "guildhall_subscriptions", labels: [("type", MetricLabel.snake(kind))],
                                                 help: "Subscriptions held by sessions, by type.")
        }
        subscriptionGauges = subs
        walBytes = registry.gauge(name: "guildhall_wal_bytes", help: "Size of the database's write-ahead log.")
        syncPackages = registry.counter(name: "guildhall_sync_packages_total", help: "Offline-sync packages sent.")
        jobsCommittedOnLoop = registry.counter(name: "guildhall_jobs_committed_on_loop_total",
                                               help: "Write jobs a loop appended to the local journal, or committed itself while the writer was idle (inline-commit-max, commit-journal; never under synchronous=FULL).")
        commitFailures = registry.counter(name: "guildhall_commit_failures_total",
                                          help: "Write jobs whose commit failed (disk full, I/O error): each was answered 503 and changed nothing.")
        syncItems = registry.counter(name: "guildhall_sync_items_total", help: "Offline-sync items sent.")
        uploads = registry.counter(name: "guildhall_file_uploads_total", help: "Uploads stored by this node's listeners.")
        uploadedBytes = registry.counter(name: "guildhall_file_uploaded_bytes_total", help: "Bytes of the uploads stored by this node's listeners.")
        downloads = registry.counter(name: "guildhall_file_downloads_total", help: "Downloads this node's listeners began to serve (a range counts once).")
        downloadedBytes = registry.counter(name: "guildhall_file_downloaded_bytes_total", help: "Bytes of files this node's listeners sent.")
        storedFiles = registry.gauge(name: "guildhall_files_stored", help: "Files messages carry (as of the first loop's last sweep).")
        storedFileBytes = registry.gauge(name: "guildhall_files_stored_bytes", help: "Bytes of the files messages carry (as of the first loop's last sweep).")
        let swept = "guildhall_files_swept_total"
        let sweptHelp = "Files the sweep removed: uploads no message carried within file-grace-seconds (unsent), removed messages' files (removed), and stored bytes no file named (blob)."
        sweptUnsent = registry.counter(name: swept, labels: [("what", "unsent")], help: sweptHelp)
        sweptRemoved = registry.counter(name: swept, labels: [("what", "removed")], help: sweptHelp)
        sweptBlobs = registry.counter(name: swept, labels: [("what", "blob")], help: sweptHelp)
        let pushes = "guildhall_push_notices_total"
        let pushHelp = "Push notices, by outcome: taken by the push gateway (sent), or given up after push-deadline-seconds or a refusal (dropped)."
        pushesSent = registry.counter(name: pushes, labels: [("outcome", "sent")], help: pushHelp)
        pushesDropped = registry.counter(name: pushes, labels: [("outcome", "dropped")], help: pushHelp)
        pushRetries = registry.counter(name: "guildhall_push_retries_total", help: "Posts to the push gateway tried again after no answer, 429 or 5xx.")
        receiptRequests = registry.counter(name: "guildhall_receipt_requests_total", help: "Group read receipts asked for (messages).")
        receiptResponses = registry.counter(name: "guildhall_receipt_responses_total", help: "Group read receipt responses recorded.")
        eventsShed = registry.counter(name: "guildhall_events_shed_total",
                                      help: "Typing frames shed and unread updates collapsed for sessions behind on their writes.")
        let stored = "guildhall_messages_stored_total"
        let help = "Messages stored, by kind: channel, direct, or an operation on a message (recall, edit, delete, reaction)."
        messagesChannel = registry.counter(name: stored, labels: [("kind", "channel")], help: help)
        messagesDirect = registry.counter(name: stored, labels: [("kind", "direct")], help: help)
        operations = registry.counter(name: stored, labels: [("kind", "operation")], help: help)
        deliveries = registry.counter(name: "guildhall_deliveries_total", help: "Channel message events queued to sessions.")
        gapsFetched = registry.counter(name: "guildhall_channel_gaps_fetched_total",
                                       help: "Gaps in a channel's messages a gateway saw and fetched from the home (a cluster's moved or lost events).")
        let cuts = "guildhall_slow_consumer_cuts_total", cutHelp = "Connections cut as slow consumers, by cause."
        slowConsumerHard = registry.counter(name: cuts, labels: [("cause", "hard_cap")], help: cutHelp)
        slowConsumerSoft = registry.counter(name: cuts, labels: [("cause", "soft_cap")], help: cutHelp)
        slowConsumerStall = registry.counter(name: cuts, labels: [("cause", "stall")], help: cutHelp)
        slowConsumerTotal = registry.counter(name: cuts, labels: [("cause", "total_cap")], help: cutHelp)
        logins = registry.counter(name: "guildhall_logins_total", help: "Sessions logged in (a resume that fell back counts here too).")
        resumesReplayed = registry.counter(name: "guildhall_resumes_total", labels: [("outcome", "replayed")],
                                           help: "Resumes: replayed (the session went on) or fell back (logged in afresh, offline sync).")
        resumesFellBack = registry.counter(name: "guildhall_resumes_total", labels: [("outcome", "fell_back")],
                                           help: "Resumes: replayed (the session went on) or fell back (logged in afresh, offline sync).")
        var phaseGauges: [String: Gauge] = [:]
        for phase in ["live", "syncing", "detached"] {
            for transport in ["tcp", "websocket"] {
                phaseGauges["\(phase)/\(transport)"] = registry.gauge(name: "guildhall_sessions_by_phase",
                                                                      labels: [("phase", phase), ("transport", transport)],
                                                                      help: "Sessions on the node's gateways by phase and transport.")
            }
        }
        phases = phaseGauges
        commitLatency = registry.valueHistogram(name: "guildhall_commit_latency_seconds",
                                                buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
                                                help: "Time from a write job's submission to its commit.")
        commitBatch = registry.valueHistogram(name: "guildhall_commit_batch_size", buckets: [1, 2, 4, 8, 16, 64, 256, 1024],
                                              help: "Write jobs committed together in one transaction.")
        publisherPauses = registry.valueHistogram(name: "guildhall_publisher_pause_seconds", buckets: [0.001, 0.01, 0.1, 1, 10],
                                                  help: "How long publishers were not read while the fan-out they wait for drained (outbound-pause-bytes).")
        sessions = registry.gauge(name: "guildhall_sessions", help: "Sessions on the node's gateways (as of each loop's last sweep).")
        connections = registry.gauge(name: "guildhall_connections", help: "Client connections the node holds.")
        outboundBytes = registry.gauge(name: "guildhall_outbound_queued_bytes", help: "Bytes queued to sessions and not yet written.")
        outboundPeak = registry.gauge(name: "guildhall_outbound_queued_bytes_peak",
                                      help: "The most bytes queued to sessions, all loops together, at the end of a loop turn (after the total cap) since the start.")
        storeQueue = registry.gauge(name: "guildhall_store_queue_depth", help: "Write jobs waiting for the writer.")
        process = ProcessMetrics(registry)
        allocator = AllocatorMetrics(registry)
        cluster = clustered ? ClusterMetrics(registry) : nil
        // The labelled families exist from the start, each at 0, so a dashboard or an alert sees 0 rather than no data.
        for code in [400, 401, 403, 404, 409, 413, 414, 429, 500, 503] { counter(errors, String(code), Self.errorsFamily) }
        for reason in Self.loginFailureReasons { counter(loginFailures, reason, Self.loginFailuresFamily) }
        for rate in RateClass.allCases { counter(refusals, MetricLabel.snake(rate), Self.refusalsFamily) }
        for reason in GHCloseReason.allCases where reason != .unspecified { counter(closes, MetricLabel.snake(reason), Self.closesFamily) }
    }

    func fileUploaded(bytes: UInt64) {
        uploads.increment()
        uploadedBytes.increment(by: Int64(bytes))
    }

    func fileServed() { downloads.increment() }
    func fileBytesServed(_ n: Int) { downloadedBytes.increment(by: Int64(n)) }

    /// What one sweep of files removed (Attachments.swift).
    func filesSwept(unsent: Int, removed: Int, blobs: Int) {
        sweptUnsent.increment(by: Int64(unsent))
        sweptRemoved.increment(by: Int64(removed))
        sweptBlobs.increment(by: Int64(blobs))
    }

    /// A labelled counter family: its name, its label, its help.
    private typealias Family = (name: String, label: String, help: String)
    private static let errorsFamily: Family = ("guildhall_errors_total", "code", "Errors answered to requests, by code.")
    private static let fileRefusalsFamily: Family = ("guildhall_file_refusals_total", "status",
                                                     "Uploads and downloads the listeners refused, by HTTP status (403 a link refused, 404 a removed file, 413 too large…).")
    private static let loginFailuresFamily: Family = ("guildhall_login_failures_total", "reason", "Logins refused, by reason.")
    private static let closesFamily: Family = ("guildhall_closes_total", "reason", "Sessions closed, by close reason.")
    private static let refusalsFamily: Family = ("guildhall_rate_limited_total", "class", "Requests refused for their session's rate, by class.")
    static let loginFailureReasons = ["signature", "expired", "malformed", "identity", "rate_limited"]

    /// An error answered, by code.
    func answered(_ code: FailureCode) { counter(errors, String(code.rawValue), Self.errorsFamily).increment() }

    /// A login that failed, by reason (`loginFailureReasons`).
    func loginFailed(_ reason: String) { counter(loginFailures, reason, Self.loginFailuresFamily).increment() }

    /// A session closed, by its close reason ("none" when it just ended: resume window, logout without a word).
    func closed(_ reason: String) { counter(closes, MetricLabel.snake(reason), Self.closesFamily).increment() }

    /// A request refused for its rate, by class.
    func refused(_ rate: String) { counter(refusals, MetricLabel.snake(rate), Self.refusalsFamily).increment() }

    /// An upload or download the listener refused, by its HTTP status.
    func fileRefused(status: Int) { counter(fileRefusals, String(status), Self.fileRefusalsFamily).increment() }

    /// What messages' files hold now (Attachments.swift's sweep).
    func filesStored(count: UInt64, bytes: UInt64) {
        storedFiles.set(Double(count))
        storedFileBytes.set(Double(bytes))
    }

    @discardableResult
    private func counter(_ table: borrowing Mutex<[String: Counter]>, _ value: String, _ family: Family) -> Counter {
        table.withLock { counters in
            if let c = counters[value] { return c }
            let c = registry.counter(name: family.name, labels: [(family.label, value)], help: family.help)
            counters[value] = c
            return c
        }
    }

    /// The text exposition, with the gauges read now.
    func exposition(connections open: Int, storeQueueDepth: Int, walPath: String, cluster readiness: ClusterReadiness? = nil) -> [UInt8] {
        if let readiness { cluster?.update(readiness) }
        let perLoop = loops.withLock { $0 }
        busyReported.withLock { reported in
            for (i, figures) in perLoop.enumerated() where i < busy.count && figures.busySeconds > reported[i] {
                busy[i].increment(by: figures.busySeconds - reported[i])
                reported[i] = figures.busySeconds
            }
        }
        for (kind, gauge) in subscriptionGauges { gauge.set(to: Double(perLoop.reduce(0) { $0 + ($1.subscriptions[kind] ?? 0) })) }
        walBytes.set(to: Double(((try? FileManager.default.attributesOfItem(atPath: walPath))?[.size] as? Int) ?? 0))
        sessions.set(to: Double(perLoop.reduce(0) { $0 + $1.sessions }))
        let total = perLoop.reduce(0) { $0 + $1.sessions }, syncing = perLoop.reduce(0) { $0 + $1.syncing }
        let detached = perLoop.reduce(0) { $0 + $1.detached }
        let ws = perLoop.reduce((sessions: 0, syncing: 0, detached: 0)) {
            ($0.sessions + $1.webSocket.sessions, $0.syncing + $1.webSocket.syncing, $0.detached + $1.webSocket.detached)
        }
        phases["syncing/websocket"]?.set(to: Double(ws.syncing))
        phases["detached/websocket"]?.set(to: Double(ws.detached))
        phases["live/websocket"]?.set(to: Double(ws.sessions - ws.syncing - ws.detached))
        phases["syncing/tcp"]?.set(to: Double(syncing - ws.syncing))
        phases["detached/tcp"]?.set(to: Double(detached - ws.detached))
        phases["live/tcp"]?.set(to: Double(total - syncing - detached - (ws.sessions - ws.syncing - ws.detached)))
        outboundBytes.set(to: Double(perLoop.reduce(0) { $0 + $1.outbound }))
        outboundPeak.set(to: Double(perLoop.reduce(0) { max($0, $1.outboundPeak) }))
        connections.set(to: Double(open))
        storeQueue.set(to: Double(storeQueueDepth))
        process.update()
        allocator.update()
        var out: [UInt8] = []
        registry.emit(into: &out)
        out += Array(RequestDurations.exposition(requestDurations.withLock { $0 }).utf8)
        return out
    }

    /// A loop's requests timed by kind, at its sweep.
    func requestsTimed(byLoop loop: Int, _ figures: RequestDurations.Snapshot) {
        requestDurations.withLock { if loop < $0.count { $0[loop] = figures } }
    }
}

/// Label values in one style, snake_case, whatever the Swift name they come from.
enum MetricLabel {
    /// "channelMessages" → "channel_messages"; "slowConsumer" → "slow_consumer".
    static func snake(_ value: Any) -> String {
        var out = ""
        for c in "\(value)" {
            if c.isUppercase {
                if !out.isEmpty && out.last != "_" { out.append("_") }
                out += c.lowercased()
            } else {
                out.append(c)
            }
        }
        return out
    }
}
