// Auto mode's LRU ladder: richest level first by recency, promotion on
// activity with the coldest channel demoted.

import Testing
@testable import GuildhallCore

@Suite struct AutoLadderTests {
    func ladder(messages: Int = 2, count: Int = 2, cap: Int = 6) -> AutoLadder {
        var l = SubscriptionLimits()
        l.channelMessages = messages
        l.channelUnreadCount = count
        l.autoChannels = cap
        return AutoLadder(limits: l)
    }

    @Test func theMostRecentChannelsGetTheRichestLevels() {
        var l = ladder()
        _ = l.assign((1...8).map { (ChannelID($0), UInt64($0) * 10) })
        #expect(l.levels[8] == .messages && l.levels[7] == .messages)
        #expect(l.levels[6] == .unreadCount && l.levels[5] == .unreadCount)
        #expect(l.levels[4] == .unreadStatus && l.levels[3] == .unreadStatus)
        #expect(l.levels[2] == nil && l.levels[1] == nil, "beyond the cap")
    }

    @Test func activityPromotesAndTheColdestDemotesDownTheLadder() {
        var l = ladder()
        var activity: [ChannelID: UInt64] = [:]
        for c in 1...6 { activity[ChannelID(c)] = UInt64(c) * 10 }
        _ = l.assign(activity.map { ($0.key, $0.value) })
        // 6,5 messages; 4,3 count; 2,1 status. Channel 1 becomes the most recent.
        activity[1] = 100
        let changes = l.touch(1) { activity[$0] ?? 0 }
        #expect(l.levels[1] == .messages)
        #expect(l.levels[5] == .unreadCount, "the coldest messages channel moves down")
        #expect(l.levels[3] == .unreadStatus, "the coldest count channel moves down")
        #expect(l.levels[6] == .messages && l.levels[4] == .unreadCount && l.levels[2] == .unreadStatus)
        #expect(changes.count == 3)
    }

    @Test func promotingFromCountStopsTheCascadeThere() {
        var l = ladder()
        var activity: [ChannelID: UInt64] = [:]
        for c in 1...6 { activity[ChannelID(c)] = UInt64(c) * 10 }
        _ = l.assign(activity.map { ($0.key, $0.value) })
        activity[3] = 100
        let changes = l.touch(3) { activity[$0] ?? 0 }
        #expect(l.levels[3] == .messages && l.levels[5] == .unreadCount)
        #expect(l.levels[1] == .unreadStatus && l.levels[2] == .unreadStatus)
        #expect(changes.count == 2)
    }

    @Test func anUncoveredChannelPushesTheColdestOut() {
        var l = ladder(cap: 5)
        var activity: [ChannelID: UInt64] = [:]
        for c in 1...6 { activity[ChannelID(c)] = UInt64(c) * 10 }
        _ = l.assign(activity.map { ($0.key, $0.value) })
        #expect(l.levels[1] == nil)
        activity[1] = 100
        let changes = l.touch(1) { activity[$0] ?? 0 }
        #expect(l.levels[1] == .messages)
        #expect(l.levels[2] == nil)
        #expect(changes[2] == .some(nil))
        #expect(l.levels.count == 5)
    }

    @Test func touchingAMessagesChannelChangesNothing() {
        var l = ladder()
        _ = l.assign([(1, 10), (2, 20)])
        let changes = l.touch(2) { _ in 99 }
        #expect(changes.isEmpty)
    }
}
