// The session's state machine on its own, without sockets: what each phase
// does with an event, and what login, sync, a dropped connection, a resume
// and acknowledgements change. (Values are read into locals first: the
// state is noncopyable, and #expect's expansion would copy it.)

import GuildhallLoop
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct SessionStateTests {
    static func event(_ n: UInt8, cursor: UInt64 = 0, ord: UInt64 = 0) -> ReplayEntry {
        ReplayEntry(payload: SharedBytes([n]), unread: nil, cursor: cursor, ord: ord)
    }

    static func payloads(_ entries: [(ReplayEntry, seq: UInt64)]) -> [UInt8] { entries.map { $0.0.payload.base.load(as: UInt8.self) } }

    @Test func beforeLoginAndAfterCloseEventsAreDropped() {
        var s = SessionState(replayCapacity: 10)
        guard case .dropped = s.push(Self.event(1), heldLimit: 10) else { Issue.record("delivered before login"); return }
        s.loggedIn()
        _ = s.syncCompleted()
        s.close(.loggedOut)
        guard case .dropped = s.push(Self.event(2), heldLimit: 10) else { Issue.record("delivered after close"); return }
        let seq = s.eventSeq
        #expect(seq == 0)
    }

    @Test func liveEventsWaitForSyncThenFollowItInOrder() {
        var s = SessionState(replayCapacity: 100)
        s.loggedIn()
        let syncing = s.isSyncing
        #expect(syncing)
        guard case .held = s.push(Self.event(10), heldLimit: 100), case .held = s.push(Self.event(11), heldLimit: 100) else {
            Issue.record("live events went out during sync"); return
        }
        // Sync's own items go out at once, numbered before the held ones.
        let first = s.send(Self.event(1, ord: 3)), second = s.send(Self.event(2, ord: 7))
        #expect(first == 1 && second == 2)
        let released = s.syncCompleted()
        let held = Self.payloads(released)
        #expect(held == [10, 11])
        #expect(released.map(\.seq) == [3, 4])
        guard case .write(let seq) = s.push(Self.event(12), heldLimit: 100) else { Issue.record("live event held after sync"); return }
        #expect(seq == 5)
        let live = !s.isSyncing && s.isAttached
        #expect(live)
    }

    @Test func aClientThatNeverFinishesSyncCannotMakeTheServerHoldWithoutBound() {
        var s = SessionState(replayCapacity: 100)
        s.loggedIn()
        for i in 0..<3 { guard case .held = s.push(Self.event(UInt8(i)), heldLimit: 3) else { Issue.record("not held"); return } }
        guard case .heldOverflow = s.push(Self.event(9), heldLimit: 3) else { Issue.record("held past the limit"); return }
    }

    @Test func aDroppedSessionKeepsNumberingAndAResumeReplaysExactlyWhatWasMissed() {
        var s = SessionState(replayCapacity: 100)
        s.loggedIn()
        _ = s.syncCompleted()
        for i in 1...3 { _ = s.push(Self.event(UInt8(i)), heldLimit: 100) }
        s.detach(at: 1_000, why: .heartbeatTimeout)
        let since = s.detached?.since
        #expect(since == 1_000)
        guard case .write(let seq) = s.push(Self.event(4), heldLimit: 100) else { Issue.record("a detached session lost an event"); return }
        #expect(seq == 4)
        // The client had seen up to 2.
        let resumable = s.canResume(after: 2)
        #expect(resumable)
        let (why, missed) = s.attach(replayingAfter: 2)
        #expect(why == .heartbeatTimeout)
        #expect(missed.map { $0.payload.base.load(as: UInt8.self) } == [3, 4])
        let attached = s.isAttached && s.detached == nil
        #expect(attached)
    }

    @Test func aSessionDroppedDuringSyncGoesOnSyncingAfterTheResume() {
        var s = SessionState(replayCapacity: 100)
        s.loggedIn()
        _ = s.send(Self.event(1, ord: 5))
        s.detach(at: 10, why: nil)
        guard case .held = s.push(Self.event(2), heldLimit: 100) else { Issue.record("a live event jumped the sync"); return }
        _ = s.attach(replayingAfter: 0)
        let stillSyncing = s.isSyncing
        #expect(stillSyncing)
        let released = Self.payloads(s.syncCompleted())
        #expect(released == [2])
    }

    @Test func acknowledgingEventsMovesTheInboxCursorAndPastTheRingNoResume() {
        var s = SessionState(replayCapacity: 2)
        s.loggedIn()
        _ = s.syncCompleted()
        _ = s.push(Self.event(1, cursor: 4), heldLimit: 2)
        _ = s.push(Self.event(2), heldLimit: 2)
        let moved = s.acknowledge(upTo: 1)
        #expect(moved)
        let acked = s.ackedOrd
        #expect(acked == 4)
        _ = s.push(Self.event(3), heldLimit: 2)
        _ = s.push(Self.event(4), heldLimit: 2)
        // The ring holds 3 and 4 only: a client at 1 missed 2, which is gone.
        let (from1, from2) = (s.canResume(after: 1), s.canResume(after: 2))
        #expect(!from1)
        #expect(from2)
        let (future) = s.canResume(after: 9)
        #expect(!future, "a seq the session never sent")
    }

    /// A client that acknowledges nothing keeps at most the byte cap of events alive, however
    /// many the count allows; acknowledging frees the bytes again.
    @Test func theReplayBufferHoldsAtMostItsByteCap() {
        var s = SessionState(replayCapacity: 100, replayByteCap: 10)
        s.loggedIn()
        _ = s.syncCompleted()
        let four = { ReplayEntry(payload: SharedBytes([1, 2, 3, 4]), unread: nil, cursor: 0, ord: 0) }
        for _ in 0..<5 { _ = s.push(four(), heldLimit: 100) }
        // 5 events of 4 bytes: only the newest 2 (8 bytes) fit under 10.
        let (held, first, resumable) = (s.replay.count, s.replay.firstSeq, s.canResume(after: 3))
        #expect(held == 2 && first == 4 && resumable)
        let tooOld = s.canResume(after: 2)
        #expect(!tooOld)
        _ = s.acknowledge(upTo: 5)
        for _ in 0..<2 { _ = s.push(four(), heldLimit: 100) }
        let after = s.replay.count
        #expect(after == 2, "acknowledged bytes no longer count")
    }

    /// The fan-out's fast path (`numberLive`) numbers, keeps and moves the
    /// inbox position as `push` does while the session writes, and leaves
    /// every other phase to `push` (it answers nil and changes nothing).
    @Test func aRunsFastPathNumbersAndKeepsAsPushDoes() {
        var pushed = SessionState(replayCapacity: 3), fast = SessionState(replayCapacity: 3)
        let early = fast.numberLive(SharedBytes([0]), unread: nil, cursor: 0)
        #expect(early == nil, "before login")
        pushed.loggedIn()
        fast.loggedIn()
        let syncing = fast.numberLive(SharedBytes([0]), unread: nil, cursor: 0)
        #expect(syncing == nil, "during sync the event is held, which push does")
        _ = pushed.syncCompleted()
        _ = fast.syncCompleted()
        let unread = FrameEncoding.RecipientUnread(unreadCount: 5, mentionedCount: 1, ackTimestamp: 9, readSeq: 2)
        for (n, cursor) in [(UInt8(1), UInt64(0)), (2, 7), (3, 0), (4, 5), (5, 0)] {
            guard case .write(let a) = pushed.push(ReplayEntry(payload: SharedBytes([n]), unread: unread, cursor: cursor,
                                                               ord: max(pushed.queuedOrd, cursor)), heldLimit: 10),
                  let b = fast.numberLive(SharedBytes([n]), unread: unread, cursor: cursor) else {
                Issue.record("event \(n) not written"); return
            }
            #expect(a == b)
        }
        let (queued, seq) = (fast.queuedOrd, fast.eventSeq)
        let (queuedByPush, seqByPush) = (pushed.queuedOrd, pushed.eventSeq)
        #expect(queued == queuedByPush && queued == 7 && seq == seqByPush && seq == 5)
        let kept = fast.replay.events(after: 0).map { [$0.payload.base.load(as: UInt8.self)] + [UInt8($0.ord), UInt8($0.cursor)] }
        let keptByPush = pushed.replay.events(after: 0).map { [$0.payload.base.load(as: UInt8.self)] + [UInt8($0.ord), UInt8($0.cursor)] }
        #expect(kept == keptByPush && kept.map { $0[0] } == [3, 4, 5], "the ring holds the newest three, alike")
        _ = fast.acknowledge(upTo: 5)
        _ = pushed.acknowledge(upTo: 5)
        let (acked, ackedByPush) = (fast.ackedOrd, pushed.ackedOrd)
        #expect(acked == ackedByPush)
    }
}
