// MemberOrder keeps a server's members in list order as they change, pages
// from a cursor that survives members leaving, and MemberWindow says what a watch covers.

import Testing
@testable import GuildhallCore

@Suite struct MemberOrderTests {
    func key(_ user: String, _ rank: UInt64 = 0) -> MemberListKey { MemberListKey(rank: rank, name: user, user: user) }

    @Test func theOwnerFirstThenHigherRolesThenNames() {
        let order = MemberOrder([key("zed"), key("amy"), key("owner", .max), key("mod", 5), key("bob"), key("admin", 9)])
        #expect(order.keys.map(\.user) == ["owner", "admin", "mod", "amy", "bob", "zed"])
    }

    @Test func changesKeepItSortedAndPagesFollowTheCursor() {
        var order = MemberOrder((0..<10).map { key("u\($0)") })
        order.set(key("u5", 3))
        order.remove("u0")
        order.set(key("a", 0))
        #expect(order.keys.map(\.user) == ["u5", "a", "u1", "u2", "u3", "u4", "u6", "u7", "u8", "u9"])
        let (first, next) = order.page(after: nil, limit: 4)
        #expect(first.map(\.user) == ["u5", "a", "u1", "u2"] && next == key("u2"))
        // The cursor's member leaves before the next page: it goes on from where it stood.
        order.remove("u2")
        let (second, _) = order.page(after: next, limit: 3)
        #expect(second.map(\.user) == ["u3", "u4", "u6"])
        let (filtered, end) = order.page(after: nil, limit: 100) { $0.user.hasSuffix("9") || $0.user == "a" }
        #expect(filtered.map(\.user) == ["a", "u9"] && end == nil)
        #expect(MemberListKey(cursor: key("u3", 7).cursor) == key("u3", 7) && MemberListKey(cursor: "x.y") == nil)
    }

    @Test func aWindowCoversWhatLiesAfterItsStartThroughItsEnd() {
        let w = MemberWindow(from: key("b"), through: key("d"))
        #expect(!w.covers(key("b")) && w.covers(key("c")) && w.covers(key("d")) && !w.covers(key("e")) && !w.covers(key("a")))
        #expect(MemberWindow(from: nil, through: nil).covers(key("anything", .max)))
    }
}
