// SubscriptionAllowance: grants within the limit, reservations until the
// guild home reports or the subscribe fails, held targets counting once.

import Testing
@testable import GuildhallCore

@Suite struct SubscriptionAllowanceTests {
    let kind = SubscriptionKind.channelMessages
    func channel(_ c: UInt64) -> SubscriptionTarget { SubscriptionTarget(server: 1, channel: c) }

    @Test func grantsInOrderWhileHeldAndReservedFitTheLimit() {
        var a = SubscriptionAllowance()
        a.report("bob", kind, channel(1), holds: true)
        #expect(a.grant("bob", kind, [channel(1), channel(2), channel(3), channel(2)], limit: 2, now: 0) == [true, true, false, true],
                "held counts once, a second ask of a reserved target is granted, the third place is not there")
        #expect(a.count("bob", kind) == 2)
        #expect(a.grant("alice", kind, [channel(3)], limit: 2, now: 0) == [true], "limits are per user")
    }

    @Test func aReservationEndsWhenReportedReleasedOrStale() {
        var a = SubscriptionAllowance()
        #expect(a.grant("bob", kind, [channel(1), channel(2)], limit: 2, now: 0) == [true, true])
        a.report("bob", kind, channel(1), holds: true)  // taken: held now
        a.release("bob", kind, [channel(2)])  // failed: its place is back
        #expect(a.count("bob", kind) == 1)
        #expect(a.grant("bob", kind, [channel(3)], limit: 2, now: 0) == [true])
        #expect(a.grant("bob", kind, [channel(4)], limit: 2, now: 0) == [false])
        #expect(a.grant("bob", kind, [channel(4)], limit: 2, now: SubscriptionAllowance.reservationMs) == [true],
                "a reservation nobody reported on is dropped")
        a.report("bob", kind, channel(1), holds: false)
        #expect(a.count("bob", kind) == 1)
    }

    @Test func serverKindsCountByServerAndChannelKindsByChannel() {
        var a = SubscriptionAllowance()
        #expect(a.grant("bob", .serverNotifications, [SubscriptionTarget(server: 1, channel: 5), SubscriptionTarget(server: 1)], limit: 1, now: 0)
                == [true, true])
        #expect(a.grant("bob", kind, [SubscriptionTarget(server: 1, channel: 5), SubscriptionTarget(server: 2, channel: 5)], limit: 1, now: 0)
                == [true, true], "a channel is one target whatever server the request names")
    }
}
