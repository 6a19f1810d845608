// Bad input (RELIABILITY §3): B3, oversize frames and slowloris, before and after login.

import Foundation
import GuildhallCore
import GuildhallWire

enum BadInputChecks {
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
