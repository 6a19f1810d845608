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

    @Test func aFrameLeftUnfinishedPastTheFrameDeadlineEndsTheSession() {
        var l = SessionLiveness(now: 0, loginDeadlineMs: 100, idleTimeoutMs: 10_000, frameDeadlineMs: 500)
        l.loggedIn(at: 10)
        l.partialFrame(true, at: 100)
        l.partialFrame(true, at: 400)  // more bytes of the same frame do not restart its clock
        #expect(l.verdict(at: 599) == nil)
        #expect(l.verdict(at: 600) == .frameTimeout)
        l.partialFrame(false, at: 599)
        #expect(l.verdict(at: 5_000) == nil, "the frame completed")
        #expect(l.verdict(at: 10_010) == .idleTimeout, "bytes alone are not heard")
    }
}
