// What a loop's sessions hold queued, and its bounds (docs/architecture.md, docs/reliability.md
// S3). Three things:
// - The bytes publishers wait for (`drainingBytes`, which `PublisherPause`
//   and the reports to other loops' homes use): only those queued on sessions
//   whose sockets take bytes. A pause lets readers catch up; it cannot make a
//   reader that stopped read, and counting one let it hold every publisher
//   until the write-stall cut (10 s). A socket that took nothing for
//   `outbound-pause-stuck-ms` is left to the slow-consumer caps.
// - The total cap, `outbound-total-cap-bytes` over all the node's loops
//   (`NodeOutbound`), checked at the end of every turn (the turn that crosses
//   it, not the next sweep). Past it the sessions with the most queued are
//   cut first, node-wide: a loop cuts its largest only while no other loop
//   said it holds a larger one (a loop that says so but does not cut within
//   `patienceMs` is not waited for longer).
// - The most the node held at a turn's end, after the cap (for the metrics;
//   a turn that leaves the cut to a loop holding a larger session is not
//   counted: that loop's cut, or this one's after `patienceMs`, settles it).
// Loop thread only; touches the gateway's sessions and their connections.

import GuildhallLoop
import Synchronization

final class OutboundBounds {
    unowned let gateway: Gateway
    /// Bytes on stuck sessions when last counted, and when (loop ms).
    private var stuckBytes = 0
    private var countedAt: UInt64 = 0
    /// When this loop last told the node its largest session, and since when the node is over the cap.
    private var toldLargestAt: UInt64 = 0
    private var overSince: UInt64?
    /// The node last heard that this loop holds nothing.
    private var toldNothing = true

    /// How stale the stuck count and the largest told may be (both are O(sessions)).
    private static let countEveryMs: UInt64 = 10
    /// How long a loop waits for another that holds a larger session to cut it.
    private static let patienceMs: UInt64 = 50

    init(gateway: Gateway) { self.gateway = gateway }

    private var node: NodeOutbound { gateway.limits.node.outbound }

    /// Bytes queued on this loop's sessions whose sockets are taking them.
    var drainingBytes: Int {
        let outbound = gateway.loop.outboundBytes
        // Below a quarter of the pause bound (and 1 MiB) nobody would be paused or held.
        guard outbound > min(1 << 20, gateway.settings.outboundPauseBytes / 4) else { return outbound }
        let now = gateway.loop.nowMillis
        if now >= countedAt &+ Self.countEveryMs {
            countedAt = now
            let after = UInt64(gateway.settings.outboundPauseStuckMs)
            stuckBytes = 0
            for s in gateway.sessions.values {
                guard let c = s.connection, c.queuedBytes > 0, c.stuckMillis() >= after else { continue }
                stuckBytes += c.queuedBytes
            }
        }
        return max(0, outbound - stuckBytes)
    }

    /// The node's peak so far (for the sweep's figures).
    var peak: Int { node.peak }

    /// At the end of each turn, after the flushes: tells the node what the loop holds; past the cap, cuts.
    func turnEnded() {
        let queuedNow = gateway.loop.outboundBytes
        // Nothing queued here, as last told: nothing to tell or cut (the usual turn costs no lock).
        if queuedNow == 0 && toldNothing { return }
        toldNothing = queuedNow == 0
        let cap = gateway.settings.outboundTotalCapBytes, now = gateway.loop.nowMillis
        let total = node.told(loop: gateway.index, queued: queuedNow)
        guard total > cap * 3 / 4 else {
            overSince = nil
            return node.settled(total)
        }
        // Near the cap every loop says what its largest session holds, so the cuts go largest first across loops.
        guard total > cap || now >= toldLargestAt &+ Self.countEveryMs else { return node.settled(total) }
        toldLargestAt = now
        guard total > cap else {
            overSince = nil
            let largest = gateway.sessions.values.reduce(0) { max($0, $1.connection?.queuedBytes ?? 0) }
            node.told(loop: gateway.index, largest: largest)
            return node.settled(total)
        }
        var queued: [(bytes: Int, session: Session)] = []
        for s in gateway.sessions.values {
            guard let c = s.connection, c.queuedBytes > 0 else { continue }
            queued.append((c.queuedBytes, s))
        }
        queued.sort { $0.bytes > $1.bytes }
        let since = overSince ?? now
        overSince = since
        let waited = now >= since &+ Self.patienceMs
        let larger = node.largest(besides: gateway.index)
        var over = total - cap, left = queued[...]
        while over > 0, let (bytes, s) = left.first, bytes >= larger || waited {
            left = left.dropFirst()
            over -= bytes
            gateway.limits.node.metrics.slowConsumerTotal.increment()
            gateway.drop(s, .slowConsumer, "all sessions together queue more than \(cap) bytes; this one the most (\(bytes))", abort: true)
        }
        node.told(loop: gateway.index, largest: left.first?.bytes ?? 0)
        let after = node.told(loop: gateway.index, queued: gateway.loop.outboundBytes)
        guard over <= 0 else { return }  // a larger session elsewhere: that loop's cut settles it, this turn is not the peak
        overSince = nil
        node.settled(after)
    }
}

/// What each loop of a node holds queued and its largest session (as each
/// last told), so the total cap holds node-wide and cuts go largest first
/// across loops; and the most the node held after the cap. Any thread.
final class NodeOutbound: Sendable {
    private let loops: Mutex<(queued: [Int], largest: [Int], peak: Int)>

    init(loops count: Int) { loops = Mutex((Array(repeating: 0, count: count), Array(repeating: 0, count: count), 0)) }

    /// Loop `loop` holds `queued` bytes: the node's total.
    @discardableResult
    func told(loop: Int, queued: Int) -> Int {
        loops.withLock {
            $0.queued[loop] = queued
            $0.largest[loop] = min($0.largest[loop], queued)  // no session holds more than its loop
            return $0.queued.reduce(0, +)
        }
    }

    /// Loop `loop`'s largest session holds `largest` bytes.
    func told(loop: Int, largest: Int) { loops.withLock { $0.largest[loop] = largest } }

    /// The largest session the other loops told of.
    func largest(besides loop: Int) -> Int {
        loops.withLock { l in l.largest.indices.reduce(0) { $1 == loop ? $0 : max($0, l.largest[$1]) } }
    }

    /// The node holds `total` at a turn's end, after the cap.
    func settled(_ total: Int) { loops.withLock { $0.peak = max($0.peak, total) } }

    var peak: Int { loops.withLock { $0.peak } }
}
