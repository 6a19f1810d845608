// S3 (docs/reliability.md): a thousand subscribers stop reading at once while a
// publisher goes on. The consumers are blocking probes with 4 KiB receive
// buffers that never read after subscribing; a thread polls their sockets
// for the server's cuts (a reset shows as POLLHUP/POLLERR without reading);
// the publisher is a probe on a thread of its own timing each send's answer.

import Foundation
import Glibc
import Synchronization
import GuildhallWire

enum ManySlowConsumers {
    private enum Phase: Int { case quiet, held, storm, stop }
    private static let quietSeconds = 2.0

    /// S3: `consumers` subscribers (1000; quick 100, with the total cap scaled to 16 MiB and the
    /// pause bound to 4 MiB; both with socket-send-buffer-bytes at 256 KiB) stop reading while a
    /// publisher sends 1 KiB messages at 300/s round four channels for 9 s (quick 6 s; the
    /// write-stall and soft-cap cuts would come at 10 s). Consumer i subscribes to the first
    /// 1 + i % 4 channels, so queues grow at four speeds. Pass: the most queued at any loop
    /// turn's end (the peak gauge) stays within the total cap; every cut is the total cap's and
    /// comes largest first (no consumer is cut while one of more channels is left uncut 20 ms
    /// later); the publisher is never paused over 10 ms (the pause histogram) and its answers'
    /// p99 is within 10 ms, or within twice (2 ms above at least) its p99 in 2 s of quiet before
    /// the consumers subscribe, when this minute's machine gives no 10 ms even then. A run that
    /// misses only the p99 is run again (`rerunningLatencyMisses`).
    static func check(_ profile: ReliabilityProfile, _ seed: UInt64) throws -> CheckOutcome {
        try CheckOutcome.rerunningLatencyMisses { try once(profile) }
    }

    private static func once(_ profile: ReliabilityProfile) throws -> CheckOutcome.Run {
        let full = profile == .full
        let consumers = full ? 1000 : 100, seconds = full ? 9.0 : 6.0, rate = 300, channels = 4
        let cap = full ? 512 << 20 : 16 << 20
        // A kernel buffer of 512 KiB per connection (the kernel would grow each to 4 MiB: 4 GB for
        // 1000, past what it lets all sockets have), so the backlog is the server's to bound.
        let server = try GeneratedLoad.server(subscribers: consumers, channels: channels, ["socket-send-buffer-bytes=\(256 << 10)"]
                                              + (full ? [] : ["outbound-total-cap-bytes=\(cap)", "outbound-pause-bytes=\(4 << 20)"]))
        defer { server.stop() }
        let ids = BenchTargets.channelIDs(channels)
        var probes: [ProbeClient] = []
        for i in 0..<consumers {
            let c = try ProbeClient(port: server.port, receiveBuffer: 4096)
            guard c.login(server.token("m\(i)")) != nil else { throw BenchError("login of m\(i) failed") }
            probes.append(c)
        }
        let port = server.port, token = server.token("p0")

        // The publisher: a blocking send at a fixed pace, each answer timed; first in quiet (the
        // consumers logged in, none subscribed yet), then held while they subscribe, then beside them.
        let phase = Atomic<Int>(Phase.quiet.rawValue), parked = Atomic<Bool>(false)
        let timing = Mutex((quiet: LatencyHistogram(), latency: LatencyHistogram(), unanswered: 0))
        let sender = Thread {
            guard let publisher = try? ProbeClient(port: port), publisher.login(token) != nil else {
                timing.withLock { $0.unanswered += 1 }
                return
            }
            var send = GHSendMessage()
            send.body.text = String(repeating: "s", count: 1024)
            var start = Date()
            var n = 0
            while true {
                let now = Phase(rawValue: phase.load(ordering: .relaxed))!
                if now == .stop { break }
                if now == .held {
                    parked.store(true, ordering: .relaxed)  // no send of its is in flight
                    usleep(1000)
                    start = Date().addingTimeInterval(-Double(n) / Double(rate))  // the pace goes on from here
                    continue
                }
                let due = start.addingTimeInterval(Double(n) / Double(rate))
                let wait = due.timeIntervalSinceNow
                if wait > 0 { usleep(UInt32(wait * 1e6)) }  // the publisher's pace
                send.channelID = ids[n % channels]
                let t0 = DispatchTime.now().uptimeNanoseconds
                let answer = publisher.call(.sendMessage(send), timeout: 5)
                let took = DispatchTime.now().uptimeNanoseconds - t0
                let sent = if case .message? = answer?.result { true } else { false }
                timing.withLock {
                    if !sent { $0.unanswered += 1 } else if now == .quiet { $0.quiet.record(took) } else { $0.latency.record(took) }
                }
                n += 1
            }
        }
        sender.start()
        usleep(UInt32(quietSeconds * 1e6))  // the quiet baseline's length
        phase.store(Phase.held.rawValue, ordering: .relaxed)
        // The subscriptions start once the publisher has no send in flight.
        let parkBy = Date().addingTimeInterval(10)
        while !parked.load(ordering: .relaxed) && !sender.isFinished && Date() < parkBy { usleep(1000) }
        for (i, c) in probes.enumerated() {
            for channel in ids.prefix(1 + i % channels) { c.joinAndSubscribe(server: BenchTargets.serverID, channel: channel, join: false) }
        }
        phase.store(Phase.storm.rawValue, ordering: .relaxed)

        // Watch for cuts until the time is up.
        var cutAt = [Double?](repeating: nil, count: consumers)
        var fds = probes.map { pollfd(fd: $0.fd, events: 0, revents: 0) }
        let started = Date()
        func watch() {
            _ = poll(&fds, nfds_t(fds.count), 5)  // the watch's pace: a cut is seen within 5 ms
            let now = Date().timeIntervalSince(started)
            for i in 0..<consumers where cutAt[i] == nil && fds[i].revents & Int16(POLLHUP | POLLERR) != 0 {
                cutAt[i] = now
                fds[i].fd = -1  // poll skips it from now on
            }
        }
        while Date().timeIntervalSince(started) < seconds { watch() }
        phase.store(Phase.stop.rawValue, ordering: .relaxed)
        while !sender.isFinished { usleep(10_000) }  // the last send's answer
        // A cut the server made as the time ran out reaches its socket a moment later: the
        // watch goes on (a second at most) until it has seen every cut the server counted.
        let counted = { server.metric("guildhall_slow_consumer_cuts_total{cause=\"total_cap\"}") ?? 0 }
        let settled = Date()
        while Double(cutAt.count { $0 != nil }) < counted(), Date().timeIntervalSince(settled) < 1 { watch() }

        let tier = { (i: Int) in 1 + i % channels }
        // Largest first: a consumer cut while one of more channels was still uncut 20 ms later.
        var inversions = 0
        for i in 0..<consumers {
            guard let t = cutAt[i] else { continue }
            if (0..<consumers).contains(where: { tier($0) > tier(i) && (cutAt[$0] ?? .infinity) > t + 0.02 }) { inversions += 1 }
        }
        let cutByTier = (1...channels).map { k in (0..<consumers).filter { tier($0) == k && cutAt[$0] != nil }.count }
        let causes = ["hard_cap", "soft_cap", "stall", "total_cap"].map {
            server.metric("guildhall_slow_consumer_cuts_total{cause=\"\($0)\"}") ?? 0
        }
        let peak = server.metric("guildhall_outbound_queued_bytes_peak") ?? .infinity
        let pauses = server.metric("guildhall_publisher_pause_seconds_count") ?? 0
        let shortPauses = server.metric("guildhall_publisher_pause_seconds_bucket{le=\"0.01\"}") ?? 0
        let (quiet, latency, unanswered) = timing.withLock { ($0.quiet, $0.latency, $0.unanswered) }
        let p99 = Double(latency.quantile(0.99)) / 1e6, worst = Double(latency.max) / 1e6, quietP99 = Double(quiet.quantile(0.99)) / 1e6
        let cuts = cutByTier.reduce(0, +)
        probes.removeAll()

        let restPassed = cuts > 0 && peak <= Double(cap) && inversions == 0 && causes[3] == Double(cuts) && causes[0...2].allSatisfy { $0 == 0 }
            && pauses == shortPauses && unanswered == 0
        // Within 10 ms, or within twice the quiet p99 (2 ms above it at least) when this minute's
        // machine gives no 10 ms even in quiet: the bound is on what the slow consumers add.
        let latencyPassed = p99 <= max(10, 2 * quietP99, quietP99 + 2)
        return CheckOutcome.Run(restPassed: restPassed, latencyPassed: latencyPassed, figures: String(
            format: "%d consumers stopped, %d msg/s of 1 KiB for %.0f s: peak queued %.1f MiB (cap %d MiB); %d cut by the total cap "
                + "(the server counted %.0f; by channels subscribed 4/3/2/1: %d/%d/%d/%d; %d out of order; other causes %.0f); publisher paused %.0f times (%.0f over 10 ms), "
                + "answers p99 %.2f ms (%.2f ms in quiet), max %.2f ms, %d unanswered",
            consumers, rate, seconds, peak / 1048576, cap >> 20, cuts, causes[3], cutByTier[3], cutByTier[2], cutByTier[1], cutByTier[0], inversions,
            causes[0...2].reduce(0, +), pauses, pauses - shortPauses, p99, quietP99, worst, unanswered),
            latency: String(format: "answers p99 %.2f ms, %.2f ms in quiet", p99, quietP99))
    }
}
