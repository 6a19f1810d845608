// Login deadline and idle timeout, driven by a manual clock.

import Testing
@testable import GuildhallCore

@Suite struct SessionLivenessTests {
    @Test func aConnectionThatNeverLogsInTimesOutAtTheDeadline() {
        let l = SessionLiveness(now: 1_000, loginDeadlineMs: 5_000, idleTimeoutMs: 60_000)
        #expect(l.verdict(at: 5_999) == nil)
        #expect(l.verdict(at: 6_000) == .loginTimeout)
    }

    @Test func framesBeforeLoginDoNotExtendTheLoginDeadline() {
        var l = SessionLiveness(now: 0, loginDeadlineMs: 5_000, idleTimeoutMs: 60_000)
        l.heard(at: 4_000)
        #expect(l.verdict(at: 5_000) == .loginTimeout)
    }

    @Test func aLoggedInSessionLivesWhileItIsHeard() {
        var l = SessionLiveness(now: 0, loginDeadlineMs: 5_000, idleTimeoutMs: 10_000)
        l.loggedIn(at: 1_000)
        #expect(l.verdict(at: 10_999) == nil)
        l.heard(at: 10_000)
        #expect(l.verdict(at: 19_999) == nil)
        #expect(l.verdict(at: 20_000) == .idleTimeout)
    }
}
