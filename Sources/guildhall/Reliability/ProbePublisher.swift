// A publisher for the backpressure tests, on its own thread: it joins the
// server, then sends `count` messages of about `bytes` each into one channel at `rate` a second, pipelined (it
// never waits for an answer before the next send), each answer timed from
// its send. A message's text starts with its send time (monotonic
// nanoseconds) and number, so receivers in this process time and order it.

import Foundation
import Glibc
import GuildhallWire
import Synchronization

final class ProbePublisher: Sendable {
    struct Progress {
        var answers = LatencyHistogram()
        var sent = 0
        var acknowledged = 0
        var refused = 0
        var finished = false
        var stop = false
    }
    private let state = Mutex(Progress())

    /// Joins `server` (open to join) first.
    init(port: Int, token: String, server: UInt64, channel: UInt64, rate: Int, bytes: Int, count: Int) {
        let thread = Thread { [self] in
            defer { state.withLock { $0.finished = true } }
            guard let c = try? ProbeClient(port: port), c.login(token) != nil else { return }
            var join = GHJoinServer()
            join.serverID = server
            c.call(.joinServer(join))
            var sentAt: [UInt64: UInt64] = [:]
            let start = BenchRecord.monotonicNanos()
            /// Reads answers until `deadline` (or, `allAnswered`, until none is outstanding).
            func readAnswers(until deadline: UInt64, allAnswered: Bool = false) {
                while !(allAnswered && sentAt.isEmpty) {
                    let now = BenchRecord.monotonicNanos()
                    guard now < deadline, let f = c.next(until: Date().addingTimeInterval(Double(deadline - now) / 1e9)) else { return }
                    guard case .response(let r)? = f.kind, let at = sentAt.removeValue(forKey: r.id) else { continue }
                    let took = BenchRecord.monotonicNanos() - at
                    state.withLock {
                        if case .message? = r.result { $0.acknowledged += 1; $0.answers.record(took) } else { $0.refused += 1 }
                    }
                }
            }
            for k in 0..<count {
                if state.withLock({ $0.stop }) { break }
                readAnswers(until: start + UInt64(Double(k) * 1e9 / Double(rate)))
                let now = BenchRecord.monotonicNanos()
                var send = GHSendMessage()
                send.channelID = channel
                let head = "\(now) \(k) "
                send.body.text = head + String(repeating: "p", count: max(0, bytes - head.utf8.count))
                sentAt[c.send(.sendMessage(send))] = now
                state.withLock { $0.sent += 1 }
            }
            readAnswers(until: BenchRecord.monotonicNanos() + 10_000_000_000, allAnswered: true)
        }
        thread.start()
    }

    /// Waits until every message is sent and answered (or `timeout`); whether it finished.
    func wait(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !state.withLock({ $0.finished }) && Date() < deadline { usleep(10_000) }
        return state.withLock { $0.finished }
    }

    var progress: Progress { state.withLock { $0 } }

    func stop() {
        state.withLock { $0.stop = true }
        _ = wait(timeout: 15)
    }

    /// The send time and number a message's text starts with.
    static func stamp(_ text: String) -> (sentAt: UInt64, number: Int)? {
        let parts = text.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let at = UInt64(parts[0]), let n = Int(parts[1]) else { return nil }
        return (at, n)
    }
}
