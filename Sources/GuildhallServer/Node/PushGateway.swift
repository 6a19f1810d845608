// The operator's push gateway (docs/features.md "Push"), posted to from one
// worker queue, never a loop: a home hands it a batch and goes on. Each
// post is signed (`X-Guildhall-Signature: t=<ms>,v1=<hex>`, HMAC-SHA256 of
// "<ms>." and the body with `push-secret`), so the gateway can tell it came
// from here and when. No answer, 429 or 5xx is tried again with growing
// waits (0.5 s doubling, at most 30 s) until `push-deadline-seconds` after
// the batch was made; another 4xx gives it up at once. Notices are
// best-effort: a restart loses those not yet taken (the messages
// themselves are in offline sync).

import Crypto
import Dispatch
import Foundation
import GuildhallCore
import GuildhallFiles

final class PushGateway: Sendable {
    private let url: String
    private let key: SymmetricKey
    private let deadlineMs: UInt64
    private let timeoutMs: Int
    private let clock: @Sendable () -> UInt64
    private let metrics: NodeMetrics
    private let log: ServerLog
    private let queue = DispatchQueue(label: "guildhall-push")

    init(settings: Settings, clock: @escaping @Sendable () -> UInt64, metrics: NodeMetrics, log: ServerLog) {
        url = settings.pushGatewayURL
        key = SymmetricKey(data: Data(settings.pushSecret.utf8))
        deadlineMs = UInt64(settings.pushDeadlineSeconds) * 1000
        timeoutMs = 10_000
        self.clock = clock
        self.metrics = metrics
        self.log = log
    }

    /// Posts `batch` from the worker; returns at once.
    func post(_ batch: PushBatch) {
        let body = batch.json, count = batch.notifications.count
        let giveUpAt = DispatchTime.now().uptimeNanoseconds / 1_000_000 + deadlineMs
        queue.async { self.deliver(body, count: count, giveUpAt: giveUpAt, attempt: 0) }
    }

    /// The signature header's value for `body` made at `time`.
    static func signature(_ body: [UInt8], at time: UInt64, key: SymmetricKey) -> String {
        var signed = Data("\(time).".utf8)
        signed.append(contentsOf: body)
        let mac = HMAC<SHA256>.authenticationCode(for: signed, using: key)
        return "t=\(time),v1=" + mac.map { String(format: "%02x", $0) }.joined()
    }

    private func deliver(_ body: [UInt8], count: Int, giveUpAt: UInt64, attempt: Int) {
        let headers = [("Content-Type", "application/json"), ("X-Guildhall-Signature", Self.signature(body, at: clock(), key: key))]
        var why: String
        do throws(HTTPCallError) {
            let answer = try HTTPCall.perform("POST", url: url, headers: headers, body: body, timeoutMs: timeoutMs)
            if (200..<300).contains(answer.status) { return metrics.pushesSent.increment(by: Int64(count)) }
            why = "status \(answer.status)"
            if answer.status != 429 && answer.status < 500 { return drop(count, why) }
        } catch {
            why = error.description
        }
        let wait = UInt64(min(500 << min(attempt, 6), 30_000))
        guard DispatchTime.now().uptimeNanoseconds / 1_000_000 + wait < giveUpAt else { return drop(count, why) }
        metrics.pushRetries.increment()
        queue.asyncAfter(deadline: .now() + .milliseconds(Int(wait))) { self.deliver(body, count: count, giveUpAt: giveUpAt, attempt: attempt + 1) }
    }

    private func drop(_ count: Int, _ why: String) {
        metrics.pushesDropped.increment(by: Int64(count))
        log.warn("push notices given up", ["count": count, "why": why])
    }
}
