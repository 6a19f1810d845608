// Unread info is arithmetic over the read position; mentions count within their window.

import Testing
@testable import GuildhallCore

@Suite struct ReadPositionsTests {
    var channel: ChannelRecord {
        var c = ChannelRecord(id: 10, serverID: 1, name: "c", topic: "", custom: "", createdAt: 0)
        c.lastSeq = 10_000
        c.lastMessageTime = 5_000
        return c
    }

    @Test func unreadIsExactAt10000AndTheCapIsOnlyForDisplay() {
        let p = ReadPositions()
        let u = p.unread("bob", channel: channel, now: 6_000, displayCap: 99, mentionWindowMs: 1_000_000)
        #expect(u.unreadCount == 10_000)
        #expect(u.maxCount == 99)
        #expect(u.hasUnread)
    }

    @Test func markingReadMovesForwardOnly() {
        let p = ReadPositions()
        let forward = p.markRead("bob", 10, upTo: 9_000, now: 1)
        let backward = p.markRead("bob", 10, upTo: 5, now: 2)
        #expect(forward && !backward)
        let u = p.unread("bob", channel: channel, now: 6_000, displayCap: 99, mentionWindowMs: 1_000_000)
        #expect(u.unreadCount == 1_000 && u.readSeq == 9_000 && u.ackTimestamp == 1)
    }

    @Test func mentionsCountAfterTheReadPositionAndWithinTheWindow() {
        let p = ReadPositions()
        p.addMention("bob", 10, seq: 5, time: 100)
        p.addMention("bob", 10, seq: 9_990, time: 4_900)
        p.addMention("bob", 10, seq: 9_995, time: 4_950)
        var u = p.unread("bob", channel: channel, now: 5_000, displayCap: 99, mentionWindowMs: 1_000)
        #expect(u.mentionedCount == 2, "the mention at seq 5 is outside the window")
        p.markRead("bob", 10, upTo: 9_992, now: 5_000)
        u = p.unread("bob", channel: channel, now: 5_000, displayCap: 99, mentionWindowMs: 1_000)
        #expect(u.mentionedCount == 1)
    }

    @Test func aDeletedChannelIsForgottenForEveryone() {
        let p = ReadPositions()
        p.markRead("bob", 10, upTo: 3, now: 1)
        p.markRead("carol", 10, upTo: 4, now: 1)
        p.markRead("bob", 11, upTo: 5, now: 1)
        p.forgetChannel(10)
        let dirty = p.takeDirty()
        #expect(p.position("bob", 10) == ReadPosition() && p.position("carol", 10) == ReadPosition())
        #expect(p.position("bob", 11).readSeq == 5)
        #expect(dirty.map(\.0.channel) == [11])
    }

    @Test func dirtyPositionsAreTakenOnce() {
        let p = ReadPositions()
        p.markRead("bob", 10, upTo: 3, now: 1)
        p.touch("carol", 11, now: 2)
        let first = p.takeDirty(), second = p.takeDirty()
        #expect(first.count == 2 && second.isEmpty)
    }

    /// Every move between two takes is written once, as it stands at the take; a
    /// position already written (`written:`) is not taken again for that move.
    @Test func eachChangedPositionIsTakenOnceAsItStands() {
        let p = ReadPositions()
        let before = p.readUp("bob", 10, to: 3, now: 1)
        p.markRead("bob", 10, upTo: 7, now: 2)
        p.touch("bob", 10, now: 9)
        p.markRead("carol", 10, upTo: 4, now: 3, written: true)
        #expect(before == 0 && p.readUp("bob", 10, to: 5, now: 4) == 7)
        let taken = p.takeDirty()
        #expect(taken.count == 1 && taken.first?.1 == ReadPosition(readSeq: 7, ackTime: 2, activity: 9))
        // Forgotten and made again before the take: one row, the new one.
        p.markRead("bob", 11, upTo: 2, now: 5)
        p.forget("bob", 11)
        p.markRead("bob", 11, upTo: 1, now: 6)
        #expect(p.takeDirty().map(\.1.readSeq) == [1])
    }

    /// A take whose commit failed is taken again, with what changed since.
    @Test func unwrittenPositionsAreTakenAgain() {
        let p = ReadPositions()
        p.markRead("bob", 10, upTo: 3, now: 1)
        let failed = p.takeDirty()
        p.markRead("bob", 10, upTo: 4, now: 2)
        p.unwritten(failed.map(\.0), received: [])
        #expect(p.takeDirty().map(\.1.readSeq) == [4])
        #expect(p.takeDirty().isEmpty)
    }

    /// A replica's copy of a user's state counts exactly what the positions count.
    @Test func aReplicatedStateCountsTheSameUnreadNumbers() {
        let positions = ReadPositions()
        var c = ChannelRecord(id: 10, serverID: 1, name: "c", topic: "", custom: "", createdAt: 0)
        c.lastSeq = 40
        c.lastMessageTime = 5_000
        positions.markRead("ann", 10, upTo: 12, now: 1_000)
        for (seq, time) in [(5, UInt64(100)), (20, 900), (30, 4_000), (35, 4_500)] { positions.addMention("ann", 10, seq: UInt64(seq), time: time) }
        let state = positions.state("ann", 10)
        for now: UInt64 in [1_000, 4_200, 4_600, 9_000] {
            let expected = positions.unread("ann", channel: c, now: now, displayCap: 99, mentionWindowMs: 1_000)
            #expect(state.unread(in: c.tip, now: now, displayCap: 99, mentionWindowMs: 1_000) == expected, "at \(now)")
        }
        let replica = ReadPositions()
        replica.replace("ann", 10, with: state)
        #expect(replica.unread("ann", channel: c, now: 4_600, displayCap: 99, mentionWindowMs: 1_000)
            == positions.unread("ann", channel: c, now: 4_600, displayCap: 99, mentionWindowMs: 1_000))
    }

    /// unread = lastSeq − readSeq − removedAfter(readSeq), the same on both
    /// paths (a home's query and a gateway's trailer); removed mentions stop counting.
    @Test func removedMessagesLeaveTheUnreadAndMentionCounts() {
        var c = channel
        for seq: UInt64 in [9_995, 50, 10_000, 9_995] { c.removed.insert(seq) }
        #expect(c.removed.seqs == [50, 9_995, 10_000])
        #expect(c.removed.count(after: 9_994) == 2 && c.removed.count(after: 9_995) == 1 && c.removed.count(after: 10_000) == 0)
        let p = ReadPositions()
        p.markRead("bob", 10, upTo: 9_990, now: 1)
        p.addMention("bob", 10, seq: 9_995, time: 4_000)
        p.addMention("bob", 10, seq: 9_996, time: 4_000)
        let u = p.unread("bob", channel: c, now: 6_000, displayCap: 99, mentionWindowMs: 1_000_000)
        #expect(u.unreadCount == 8 && u.mentionedCount == 1, "10 after the position, 2 of them removed; one mention left")
        let viaState = p.state("bob", 10).unread(in: c.tip, now: 6_000, displayCap: 99, mentionWindowMs: 1_000_000)
        #expect(viaState.unreadCount == 8 && viaState.mentionedCount == 1)
        p.markRead("bob", 10, upTo: 10_000, now: 2)
        #expect(p.unread("bob", channel: c, now: 6_000, displayCap: 99, mentionWindowMs: 1_000_000).unreadCount == 0)
    }
}
