// ChannelGaps: a gateway tells from seqs that it missed messages, holds what
// comes after the gap, and delivers everything once, in order.

import GuildhallCore
import Testing

/// The gaps of one gateway, as a reference (so `#expect` can call its mutating methods).
private final class Gaps {
    var g = ChannelGaps<String>()
    var fetching: Int { g.fetching }
    func arrived(_ c: UInt64, server: UInt64, seq: UInt64, toMembers: Bool, _ e: String, now: UInt64) -> ChannelGaps<String>.Arrival {
        g.arrived(c, server: server, seq: seq, toMembers: toMembers, e, now: now)
    }
    func replayed(_ c: UInt64, seq: UInt64) -> Bool { g.replayed(c, seq: seq) }
    func filled(_ c: UInt64, upTo: UInt64) -> [String] { g.filled(c, upTo: upTo) }
    func overdue(askedBefore t: UInt64) -> [(channel: UInt64, held: [String])] { g.overdue(askedBefore: t) }
    func forget(channel: UInt64) { g.forget(channel: channel) }
    func forget(membersOf s: UInt64) { g.forget(membersOf: s) }
    func last(in c: UInt64) -> UInt64? { g.last(in: c) }
}

struct ChannelGapsTests {

    @Test func contiguousMessagesGoStraightThroughAndRepeatsAreDropped() {
        let g = Gaps()
        #expect(g.arrived(1, server: 9, seq: 4, toMembers: false, "m4", now: 10) == .deliver, "the first one starts the chain")
        #expect(g.arrived(1, server: 9, seq: 5, toMembers: false, "m5", now: 10) == .deliver)
        #expect(g.arrived(1, server: 9, seq: 0, toMembers: false, "edit", now: 10) == .deliver, "a change to a message is not sequenced")
        #expect(g.arrived(1, server: 9, seq: 5, toMembers: false, "m5", now: 10) == .duplicate)
        #expect(g.last(in: 1) == 5)
    }

    @Test func aGapHoldsWhatFollowsUntilItIsFilledThenReleasesInOrder() {
        let g = Gaps()
        _ = g.arrived(1, server: 9, seq: 3, toMembers: false, "m3", now: 10)
        #expect(g.arrived(1, server: 9, seq: 6, toMembers: false, "m6", now: 11) == .fetch(after: 3, before: 6))
        #expect(g.arrived(1, server: 9, seq: 7, toMembers: false, "m7", now: 12) == .held)
        #expect(g.arrived(1, server: 9, seq: 0, toMembers: false, "edit", now: 12) == .held, "changes wait with the messages")
        #expect(g.arrived(2, server: 9, seq: 1, toMembers: false, "other channel", now: 12) == .deliver, "other channels go on")
        #expect(g.fetching == 1)
        #expect(g.replayed(1, seq: 4))
        #expect(g.replayed(1, seq: 5))
        #expect(!g.replayed(1, seq: 5), "a replay delivers each message once")
        #expect(g.filled(1, upTo: 5) == ["m6", "m7", "edit"])
        #expect(g.last(in: 1) == 7)
        #expect(g.fetching == 0)
        #expect(g.arrived(1, server: 9, seq: 8, toMembers: false, "m8", now: 13) == .deliver)
    }

    @Test func aFillReachingPastHeldMessagesDropsThoseRepeated() {
        let g = Gaps()
        _ = g.arrived(1, server: 9, seq: 1, toMembers: false, "m1", now: 10)
        _ = g.arrived(1, server: 9, seq: 3, toMembers: false, "m3", now: 10)
        _ = g.arrived(1, server: 9, seq: 4, toMembers: false, "m4", now: 10)
        // The home replayed 2, 3 and 4 (it had them all by then).
        for seq in 2...4 { #expect(g.replayed(1, seq: UInt64(seq))) }
        #expect(g.filled(1, upTo: 4).isEmpty)
        #expect(g.arrived(1, server: 9, seq: 5, toMembers: false, "m5", now: 10) == .deliver)
    }

    @Test func anUnansweredFetchIsGivenUpAfterItsDeadline() {
        let g = Gaps()
        _ = g.arrived(1, server: 9, seq: 1, toMembers: false, "m1", now: 10)
        _ = g.arrived(1, server: 9, seq: 4, toMembers: false, "m4", now: 20)
        _ = g.arrived(1, server: 9, seq: 5, toMembers: false, "m5", now: 30)
        #expect(g.overdue(askedBefore: 20).isEmpty, "not yet")
        let given = g.overdue(askedBefore: 21)
        #expect(given.count == 1 && given[0].channel == 1 && given[0].held == ["m4", "m5"])
        #expect(g.last(in: 1) == 5)
        #expect(g.filled(1, upTo: 3).isEmpty, "a late answer finds nothing held")
    }

    @Test func theChainRestartsWhenInterestEndsOrTheAudienceChanges() {
        let g = Gaps()
        _ = g.arrived(1, server: 9, seq: 1, toMembers: false, "m1", now: 10)
        g.forget(channel: 1)
        #expect(g.arrived(1, server: 9, seq: 7, toMembers: false, "m7", now: 10) == .deliver, "no subscriber meanwhile: no gap")
        #expect(g.arrived(1, server: 9, seq: 9, toMembers: true, "m9", now: 10) == .deliver, "the server became small: a new chain")
        g.forget(channel: 1)
        #expect(g.last(in: 1) == 9, "members keep the chain when subscribers leave")
        g.forget(membersOf: 9)
        #expect(g.last(in: 1) == nil)
    }
}
