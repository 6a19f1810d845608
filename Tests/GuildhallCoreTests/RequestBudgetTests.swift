// Requests per session by rate class, and failed logins per key, without I/O.

import Testing
@testable import GuildhallCore

@Suite struct RequestBudgetTests {
    let rates = RequestBudget.Rates([0, 5, 1])

    @Test func aClassTakesTwiceItsRateAtOnceThenOneMoreEachInterval() {
        var b = RequestBudget(classes: 3, now: 0)
        for _ in 0..<10 { #expect(b.take(1, rates: rates, maxStrikes: 100, now: 0) == .allowed) }
        #expect(b.take(1, rates: rates, maxStrikes: 100, now: 0) == .refused(retryAfterMs: 200))
        #expect(b.take(1, rates: rates, maxStrikes: 100, now: 150) == .refused(retryAfterMs: 50))
        #expect(b.take(1, rates: rates, maxStrikes: 100, now: 200) == .allowed)
        #expect(b.take(2, rates: rates, maxStrikes: 100, now: 200) == .allowed, "another class has its own budget")
        for _ in 0..<1_000 { #expect(b.take(0, rates: rates, maxStrikes: 100, now: 200) == .allowed, "rate 0: no limit") }
        #expect(b.take(1, rates: rates, maxStrikes: 100, now: 1_000_000) == .allowed)
    }

    @Test func refusalsPastTheStrikesWithinTheWindowMakeTheSessionAbusive() {
        var b = RequestBudget(classes: 3, now: 0)
        for _ in 0..<2 { _ = b.take(2, rates: rates, maxStrikes: 3, now: 0) }
        for _ in 0..<3 { #expect(b.take(2, rates: rates, maxStrikes: 3, now: 10) != .allowed) }
        #expect(b.take(2, rates: rates, maxStrikes: 3, now: 10) == .abusive)
        var calm = RequestBudget(classes: 3, now: 0)
        for _ in 0..<2 { _ = calm.take(2, rates: rates, maxStrikes: 3, now: 0) }
        for t in [10, 20, 30] { #expect(calm.take(2, rates: rates, maxStrikes: 3, now: UInt64(t)) != .abusive) }
        #expect(calm.take(2, rates: rates, maxStrikes: 3, now: 10_040) == .allowed, "the window passed and the budget refilled")
    }

    @Test func aKeyFailsItsBurstThenOncePerInterval() {
        var f = LoginFailures()
        for _ in 0..<3 {
            #expect(f.wait("mallory", now: 0, burst: 3, intervalMs: 6_000) == 0)
            f.failed("mallory", now: 0, intervalMs: 6_000)
        }
        #expect(f.wait("mallory", now: 0, burst: 3, intervalMs: 6_000) == 6_000)
        #expect(f.wait("mallory", now: 5_000, burst: 3, intervalMs: 6_000) == 1_000)
        #expect(f.wait("mallory", now: 6_000, burst: 3, intervalMs: 6_000) == 0)
        #expect(f.wait("alice", now: 0, burst: 3, intervalMs: 6_000) == 0, "another key is untouched")
    }
}
