// Bad input (docs/reliability.md): B2, thousands of connections each sending one
// malformed frame beside a healthy client; B3, oversize frames and slowloris,
// before and after login.

import Foundation
import Synchronization
import GuildhallCore
import GuildhallWire

enum BadInputChecks {
    /// B2: `count` connections (10 000 full at 1000/s, 1000 quick at 250/s) opened, each sending one
    /// malformed frame (bytes that are no Frame, a truncated field, a response frame, a length
    /// prefix over the limit) while a healthy client sends a heartbeat every 10 ms. Pass: each
    /// gets its close reason (PROTOCOL_ERROR with an error naming the cause, or FRAME_TOO_LARGE)
    /// and its end within 100 ms; the healthy client's p99 during the storm under twice its p99
    /// in quiet (or under 1 ms above it, 2 ms against a debug build, whose every accept and close
    /// costs about ten times the release one: a sub-millisecond baseline doubles on a scheduler's
    /// whim); at the default log level at most one line per 1000 of them.
    ///
    /// The storm comes in rounds of one second, each after a second of quiet, and the quiet
    /// and the storm heartbeats are each pooled: a shared machine's slow minute then falls on
    /// both alike (one baseline before one storm compared two different minutes, and failed
    /// when the machine slowed between them). A run that misses only the healthy client's
    /// bound is run again (`rerunningLatencyMisses`).
    #if DEBUG
    private static let absoluteAllowanceMs = 2.0
    #else
    private static let absoluteAllowanceMs = 1.0
    #endif

    static func malformedFrames(_ profile: ReliabilityProfile, _ seed: UInt64) throws -> CheckOutcome {
        try CheckOutcome.rerunningLatencyMisses { try malformedFramesOnce(profile) }
    }

    private static func malformedFramesOnce(_ profile: ReliabilityProfile) throws -> CheckOutcome.Run {
        let (count, rate) = profile == .full ? (10_000, 1000) : (1_000, 250)
        let server = try ReliabilityServer(["log-level=info"], keepLog: true)
        defer { server.stop() }
        let healthy = HealthyClient(port: server.port, token: server.token("b2-healthy"))
        defer { healthy.stop() }
        guard healthy.waitUntilPinging() else { throw BenchError("the healthy client did not log in") }
        let linesBefore = server.logLines.count
        let response: [UInt8] = { var f = GHFrame(); f.response.id = 1; f.response.pong = GHPong(); return FrameEncoding.framed(f) }()
        let kinds: [(name: String, bytes: [UInt8], reason: GHCloseReason)] = [
            ("not a frame", [0, 0, 0, 6, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], .protocolError),
            ("truncated field", [0, 0, 0, 4, 0x0A, 0xF0, 0xFF, 0x01], .protocolError),
            ("a response frame", response, .protocolError),
            ("length over the limit", [0, 1, 0, 0, 1, 2, 3], .frameTooLarge),
        ]
        let fleet = ConnectionFleet(port: server.port)
        defer { fleet.finish() }
        var members: [ConnectionFleet.Member] = [], baseline = LatencyHistogram(), storm = LatencyHistogram()
        for _ in 0..<(count / rate) {
            usleep(250_000)  // the last round's aftermath (its sockets' teardown) is neither
            _ = healthy.takeRoundTrips()
            usleep(1_000_000)  // a second of quiet
            baseline.merge(healthy.takeRoundTrips())
            let round = fleet.open(rate, perSecond: rate) { kinds[$0 % kinds.count].bytes }
            fleet.run(for: 30, until: { round.allSatisfy(\.ended) })
            storm.merge(healthy.takeRoundTrips())
            members += round
        }
        var wrong: [String: Int] = [:], closeTimes = LatencyHistogram()
        for m in members {
            let kind = kinds[m.index % kinds.count]
            let named = kind.reason == .frameTooLarge || !(m.errors.first?.message.isEmpty ?? true)
            if m.closeReasons != [kind.reason] || !named || !m.ended { wrong["\(kind.name): \(m.closeReasons)", default: 0] += 1 }
            if m.ended && m.sentAt > 0 { closeTimes.record(m.endedAt - m.sentAt) }
        }
        let slowCloses = members.filter { $0.ended && $0.endedAt - $0.sentAt > 100_000_000 }.count
        let lines = server.logLines.count - linesBefore
        let (p99Before, p99During) = (Double(baseline.quantile(0.99)) / 1e6, Double(storm.quantile(0.99)) / 1e6)
        let healthyHeld = p99During < max(2 * p99Before, p99Before + absoluteAllowanceMs)
        let restPassed = wrong.isEmpty && slowCloses == 0 && lines <= max(1, count / 1000) && storm.count > 0
        return CheckOutcome.Run(restPassed: restPassed, latencyPassed: healthyHeld,
                            figures: String(format: "%d connections, one malformed frame each (4 kinds): %d with the wrong answer, closed within p99 %.1f ms / max %.1f ms (%d over 100 ms); "
                                            + "healthy client p99 %.2f ms in quiet, %.2f ms during (%llu heartbeats); %d log lines at info",
                                            count, wrong.values.reduce(0, +), Double(closeTimes.quantile(0.99)) / 1e6, Double(closeTimes.max) / 1e6, slowCloses,
                                            p99Before, p99During, storm.count, lines)
                                + (wrong.isEmpty ? "" : "; wrong: \(wrong.prefix(4))"),
                            latency: String(format: "healthy p99 %.2f ms in quiet, %.2f ms during", p99Before, p99During))
    }

    /// B3: a frame of exactly the limit is read; limit + 1 gets FRAME_TOO_LARGE and a close,
    /// decided from the length prefix alone (no body is sent); before login the limit is 4 KiB.
    /// A frame sent a byte at a time, slower than the deadlines, is closed at them.
    static func oversizeAndSlowloris(_ profile: ReliabilityProfile, _ seed: UInt64) throws -> CheckOutcome {
        let loginDeadline = profile == .full ? 5_000 : 1_000, frameDeadline = profile == .full ? 10_000 : 1_000
        let server = try ReliabilityServer(["login-deadline-ms=\(loginDeadline)", "frame-deadline-ms=\(frameDeadline)"])
        defer { server.stop() }
        var failures: [String] = []

        // Exactly the limit after login: a heartbeat padded with an unknown field, answered.
        let exact = try ProbeClient(port: server.port)
        guard exact.login(server.token("b3-exact")) != nil else { throw BenchError("login failed") }
        exact.send(paddedHeartbeat(total: Limits.maxFrameBytes))
        var answered: GHFrame?
        let by = Date().addingTimeInterval(10)
        while answered == nil, let f = exact.next(until: by) { if case .response? = f.kind { answered = f } }  // events (sync completed) pass by
        if case .pong? = answered?.response.result {} else { failures.append("a frame of exactly \(Limits.maxFrameBytes) bytes was not answered") }

        // One byte over, after and before login: the prefix alone is refused.
        for (loggedIn, limit) in [(true, Limits.maxFrameBytes), (false, Limits.maxFrameBytesBeforeLogin)] {
            let c = try ProbeClient(port: server.port)
            if loggedIn, c.login(server.token("b3-over")) == nil { throw BenchError("login failed") }
            let started = Date()
            var prefix: [UInt8] = []
            FrameEncoding.appendLength(UInt32(limit + 1), to: &prefix)
            c.send(prefix)
            let (reasons, _) = c.readToEnd(until: started.addingTimeInterval(5))
            let took = Date().timeIntervalSince(started)
            if reasons != [.frameTooLarge] || !c.ended || took > 1 {
                failures.append("\(limit + 1) bytes announced \(loggedIn ? "after" : "before") login: \(reasons), ended \(c.ended) after \(took) s")
            }
        }

        // Slowloris: a byte every half deadline never completes a frame.
        var slowest = 0.0
        for (loggedIn, deadline, reason) in [(false, loginDeadline, GHCloseReason.loginTimeout), (true, frameDeadline, .frameTimeout)] {
            let c = try ProbeClient(port: server.port)
            if loggedIn, c.login(server.token("b3-slow")) == nil { throw BenchError("login failed") }
            let started = Date()
            var reasons: [GHCloseReason] = []
            var sent = 0
            let bytes: [UInt8] = [0, 0, 0, 100] + [UInt8](repeating: 0x0A, count: 100)
            while !c.ended && Date().timeIntervalSince(started) < Double(deadline) / 1000 * 3 && sent < bytes.count {
                c.send([bytes[sent]])
                sent += 1
                let next = Date().addingTimeInterval(Double(deadline) / 2000)
                while let f = c.next(until: next) { if case .closed(let r)? = f.event.body { reasons.append(r.reason) } }
            }
            let took = Date().timeIntervalSince(started)
            slowest = max(slowest, took - Double(deadline) / 1000)
            if reasons != [reason] || !c.ended || took > Double(deadline) / 1000 + 1 {
                failures.append("slowloris \(loggedIn ? "after" : "before") login: \(reasons), ended \(c.ended) after \(took) s")
            }
        }
        let figures = failures.isEmpty
            ? String(format: "limit %d B read, limit + 1 refused from the prefix (4 KiB before login); slowloris closed at most %.2f s past its deadline", Limits.maxFrameBytes, slowest)
            : failures.joined(separator: "; ")
        return CheckOutcome(passed: failures.isEmpty, figures: figures)
    }

    /// Frame{request{id, heartbeat}} plus an unknown field at the Frame's level making the payload `total` bytes, length-prefixed.
    static func paddedHeartbeat(total: Int) -> [UInt8] {
        var f = GHFrame()
        f.request.id = 7
        f.request.heartbeat = GHHeartbeat()
        var payload = FrameEncoding.payload(f)
        // Field 15, length-delimited: 1 byte of tag, the length's varint, the bytes.
        var n = total - payload.count - 1 - 3
        while 1 + varintSize(n) + n + payload.count < total { n += 1 }
        while 1 + varintSize(n) + n + payload.count > total { n -= 1 }
        payload.append(0x7A)
        var v = n
        while v >= 0x80 { payload.append(UInt8(v & 0x7F) | 0x80); v >>= 7 }
        payload.append(UInt8(v))
        payload += [UInt8](repeating: 0x61, count: n)
        var out: [UInt8] = []
        FrameEncoding.appendLength(UInt32(payload.count), to: &out)
        return out + payload
    }

    private static func varintSize(_ n: Int) -> Int {
        var size = 1, v = n >> 7
        while v != 0 { size += 1; v >>= 7 }
        return size
    }
}

/// A logged-in client on its own thread sending a heartbeat every 10 ms and timing each answer.
final class HealthyClient: Sendable {
    private let state = Mutex((roundTrips: LatencyHistogram(), pinging: false, stop: false))

    init(port: Int, token: String) {
        let thread = Thread { [self] in
            guard let c = try? ProbeClient(port: port), c.login(token) != nil else { return }
            state.withLock { $0.pinging = true }
            while !state.withLock({ $0.stop }) {
                let started = BenchRecord.monotonicNanos()
                guard case .pong? = c.call(.heartbeat(GHHeartbeat()), timeout: 5)?.result else { break }
                let took = BenchRecord.monotonicNanos() - started
                state.withLock { $0.roundTrips.record(took) }
                usleep(10_000)  // the pace of the heartbeats
            }
            state.withLock { $0.pinging = false }
        }
        thread.start()
    }

    func waitUntilPinging() -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while !state.withLock({ $0.pinging }) && Date() < deadline { usleep(10_000) }
        return state.withLock { $0.pinging }
    }

    /// The round trips since the last call.
    func takeRoundTrips() -> LatencyHistogram {
        state.withLock { s in
            defer { s.roundTrips = LatencyHistogram() }
            return s.roundTrips
        }
    }

    func stop() {
        state.withLock { $0.stop = true }
        let deadline = Date().addingTimeInterval(6)
        while state.withLock({ $0.pinging }) && Date() < deadline { usleep(10_000) }
    }
}
