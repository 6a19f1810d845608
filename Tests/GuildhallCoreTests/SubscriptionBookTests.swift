// Limits count per user across sessions; the three channel levels replace
// each other per session; typing is independent; the index follows.

import Testing
@testable import GuildhallCore

@Suite struct SubscriptionBookTests {
    func ch(_ c: ChannelID, _ s: ServerID = 1) -> SubscriptionTarget { SubscriptionTarget(server: s, channel: c) }

    @Test func theLimitIsReachedExactlyThenOneMoreIsRefused() {
        let book = SubscriptionBook()
        book.open(1, user: "alice")
        for c in 1...3 { #expect(book.subscribe(1, .channelMessages, ch(ChannelID(c)), limit: 3) == .ok) }
        #expect(book.subscribe(1, .channelMessages, ch(4), limit: 3) == .limitReached(3))
        #expect(book.count("alice", .channelMessages) == 3)
    }

    @Test func aTargetHeldBySeveralSessionsOfOneUserCountsOnce() {
        let book = SubscriptionBook()
        book.open(1, user: "alice")
        book.open(2, user: "alice")
        #expect(book.subscribe(1, .channelMessages, ch(1), limit: 1) == .ok)
        #expect(book.subscribe(2, .channelMessages, ch(1), limit: 1) == .ok)
        #expect(book.subscribe(2, .channelMessages, ch(2), limit: 1) == .limitReached(1))
        book.close(1)
        #expect(book.count("alice", .channelMessages) == 1)
        #expect(book.holders(.channelMessages, ch(1)) == [2])
    }

    @Test func limitsAreSeparatePerUser() {
        let book = SubscriptionBook()
        book.open(1, user: "alice")
        book.open(2, user: "bob")
        #expect(book.subscribe(1, .channelMessages, ch(1), limit: 1) == .ok)
        #expect(book.subscribe(2, .channelMessages, ch(2), limit: 1) == .ok)
    }

    @Test func theLastChannelLevelWinsAndTypingStaysIndependent() {
        let book = SubscriptionBook()
        book.open(1, user: "alice")
        _ = book.subscribe(1, .channelMessages, ch(1), limit: 10)
        _ = book.subscribe(1, .channelTyping, ch(1), limit: 10)
        _ = book.subscribe(1, .channelUnreadCount, ch(1), limit: 10)
        #expect(book.holders(.channelMessages, ch(1)).isEmpty)
        #expect(book.holders(.channelUnreadCount, ch(1)) == [1])
        #expect(book.holders(.channelTyping, ch(1)) == [1])
        #expect(book.count("alice", .channelMessages) == 0)
        _ = book.subscribe(1, .channelUnreadStatus, ch(1), limit: 10)
        #expect(book.subscriptions(of: 1)?.channels[1]?.level == .unreadStatus)
        #expect(book.count("alice", .channelUnreadCount) == 0)
        #expect(book.count("alice", .channelUnreadStatus) == 1)
    }

    @Test func droppingAServerRemovesOnlyItsTargets() {
        let book = SubscriptionBook()
        book.open(1, user: "alice")
        _ = book.subscribe(1, .serverNotifications, SubscriptionTarget(server: 1), limit: 10)
        _ = book.subscribe(1, .channelMessages, ch(10, 1), limit: 10)
        _ = book.subscribe(1, .channelMessages, ch(20, 2), limit: 10)
        _ = book.subscribe(1, .guestChannel, ch(30, 1), limit: 10)
        book.drop(1, server: 1, kinds: [.serverNotifications, .channelMessages])
        #expect(book.holders(.channelMessages, ch(10, 1)).isEmpty)
        #expect(book.holders(.channelMessages, ch(20, 2)) == [1])
        #expect(book.holders(.guestChannel, ch(30, 1)) == [1])
        #expect(book.holders(.serverNotifications, SubscriptionTarget(server: 1)).isEmpty)
    }

    @Test func unsubscribingFreesTheLimit() {
        let book = SubscriptionBook()
        book.open(1, user: "alice")
        _ = book.subscribe(1, .channelTyping, ch(1), limit: 1)
        book.unsubscribe(1, .channelTyping, ch(1))
        #expect(book.subscribe(1, .channelTyping, ch(2), limit: 1) == .ok)
    }
}
