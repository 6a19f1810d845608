// The direct conversation state: sent status by arithmetic (delivered seq,
// read time, single reads), unread counts, and the pair index.

import Testing
@testable import GuildhallCore

@Suite struct DirectConversationsTests {
    func conversation(sentByAnn times: [UInt64]) -> DirectConversation {
        var c = DirectConversation(id: 9, users: ("bob", "ann"), createdAt: 1)
        for t in times {
            let (seq, time) = c.append(now: t)
            c.committed(by: "ann", seq: seq, time: time)
        }
        return c
    }

    @Test func statusMovesFromSentToDeliveredToRead() {
        var c = conversation(sentByAnn: [100, 200, 300])
        #expect(c.status(ofMessageBy: "ann", uid: 1, seq: 1, sentTime: 100) == .sent)
        let deliveredUpTo2 = c.delivered(to: "bob", upTo: 2)
        #expect(deliveredUpTo2)
        let deliveredBack = c.delivered(to: "bob", upTo: 1)
        #expect(!deliveredBack, "delivery never goes back")
        #expect(c.status(ofMessageBy: "ann", uid: 2, seq: 2, sentTime: 200) == .delivered)
        #expect(c.status(ofMessageBy: "ann", uid: 3, seq: 3, sentTime: 300) == .sent)
        let readTo200 = c.read(by: "bob", upTo: 200, count: 2)
        #expect(readTo200)
        #expect(c.status(ofMessageBy: "ann", uid: 1, seq: 1, sentTime: 100) == .read)
        #expect(c.status(ofMessageBy: "ann", uid: 2, seq: 2, sentTime: 200) == .read)
        #expect(c.unread(for: "bob") == 1 && c.unread(for: "ann") == 0)
    }

    @Test func singleReadsCountUntilAReadByTimeCoversThem() {
        var c = conversation(sentByAnn: [100, 200, 300])
        let readThird = c.readOne(by: "bob", uid: 3, sentTime: 300)
        #expect(readThird)
        let readThirdAgain = c.readOne(by: "bob", uid: 3, sentTime: 300)
        #expect(!readThirdAgain, "a second read of one message is a no-op")
        #expect(c.status(ofMessageBy: "ann", uid: 3, seq: 3, sentTime: 300) == .read)
        #expect(c.status(ofMessageBy: "ann", uid: 2, seq: 2, sentTime: 200) == .sent)
        let readAll = c.readAll(by: "bob", now: 400)
        #expect(readAll)
        #expect(c.side("bob").readSingly.isEmpty && c.unread(for: "bob") == 0)
        let readSecondLate = c.readOne(by: "bob", uid: 2, sentTime: 200)
        #expect(!readSecondLate)
        let readBack = c.read(by: "bob", upTo: 150, count: 1)
        #expect(!readBack, "a read time never goes back")
    }

    @Test func timesNeverGoBackAndThePairFindsItsConversation() {
        var c = conversation(sentByAnn: [500])
        let (seq, time) = c.append(now: 400)
        #expect(seq == 2 && time == 500)
        var all = DirectConversations()
        all.add(c)
        #expect(all.between("ann", "bob")?.id == 9 && all.between("bob", "ann")?.id == 9)
        #expect(all.between("ann", "cid") == nil)
        #expect(all.conversations(of: "bob").map(\.id) == [9] && c.peer(of: "bob") == "ann")
        #expect(c.users == ("ann", "bob"))
    }
}

@Suite struct GroupConversationsTests {
    /// ann, bob and cid; ann sent at 100 and 200, bob at 300.
    func group() -> DirectConversation {
        var c = DirectConversation(group: 7, name: "trio", owner: "ann", members: ["cid", "ann", "bob", "ann"], createdAt: 1)
        for (who, t) in [("ann", 100), ("ann", 200), ("bob", 300)] as [(UserID, UInt64)] {
            let (seq, time) = c.append(now: t)
            c.committed(by: who, seq: seq, time: time)
        }
        return c
    }

    @Test func aMessageIsReadOnceEveryRecipientReadItAndCountsSay() {
        var c = group()
        #expect(c.members == ["ann", "bob", "cid"] && c.isGroup && c.others(of: "bob") == ["ann", "cid"])
        #expect(c.receipts(ofMessageBy: "ann", uid: 1, seq: 1, sentTime: 100) == (0, 0, 2))
        _ = c.delivered(to: "bob", upTo: 3)
        _ = c.read(by: "cid", upTo: 100, count: 1)
        #expect(c.receipts(ofMessageBy: "ann", uid: 1, seq: 1, sentTime: 100) == (2, 1, 2), "cid read it, so received it")
        #expect(c.status(ofMessageBy: "ann", uid: 1, seq: 1, sentTime: 100) == .delivered)
        _ = c.read(by: "bob", upTo: 250, count: 2)
        #expect(c.status(ofMessageBy: "ann", uid: 1, seq: 1, sentTime: 100) == .read)
        // bob read the second; cid read only up to the first and received nothing past it.
        #expect(c.status(ofMessageBy: "ann", uid: 2, seq: 2, sentTime: 200) == .sent)
        _ = c.delivered(to: "cid", upTo: 2)
        #expect(c.status(ofMessageBy: "ann", uid: 2, seq: 2, sentTime: 200) == .delivered)
    }

    @Test func unreadCountsEveryoneElsesMessagesAndARemovalMovesEachReader() {
        var c = group()
        #expect(c.unread(for: "cid") == 3 && c.unread(for: "ann") == 1 && c.unread(for: "bob") == 2)
        _ = c.readAll(by: "cid", now: 400)
        _ = c.read(by: "bob", upTo: 150, count: 1)
        #expect(c.unread(for: "cid") == 0 && c.unread(for: "bob") == 1)
        // ann's first message goes: cid and bob had read it; each count moves.
        let moved = c.removed(by: "ann", sentTime: 100)
        #expect(moved.map(\.user) == ["bob", "cid"] && c.unread(for: "cid") == 0 && c.unread(for: "bob") == 1 && c.unread(for: "ann") == 1)
    }

    @Test func aGroupIsFoundByItsMembersNotAsAPair() {
        var all = DirectConversations()
        all.add(group())
        all.add(DirectConversation(id: 8, users: ("ann", "bob"), createdAt: 2))
        #expect(all.between("ann", "bob")?.id == 8)
        #expect(Set(all.conversations(of: "cid").map(\.id)) == [7] && Set(all.conversations(of: "ann").map(\.id)) == [7, 8])
        #expect(all.peers(of: "ann").sorted() == ["bob", "cid"])
    }

    @Test func aNewMemberStartsWithEverythingReadAndALeaverStillCounts() {
        var c = group()
        let added = c.admit(["dan", "ann"], now: 250)
        #expect(added.map(\.user) == ["dan"] && c.members == ["ann", "bob", "cid", "dan"])
        #expect(added[0].readTime == 300 && added[0].deliveredSeq == 3 && c.unread(for: "dan") == 0, "what came before is read")
        #expect(c.receipts(ofMessageBy: "ann", uid: 1, seq: 1, sentTime: 100) == (1, 1, 3), "dan counts as having read ann's first")
        // ann (the owner) leaves: the group passes to bob, and ann's two messages still count for cid.
        c.dismiss("ann")
        #expect(c.owner == "bob" && !c.includes("ann") && c.unread(for: "cid") == 3 && c.unread(for: "ann") == 0)
        #expect(!c.delivered(to: "ann", upTo: 9) && !c.readAll(by: "ann", now: 500), "one who left has no side to move")
        // A message ann sent as she left is stored after: it counts as one who left.
        c.committed(by: "ann", seq: 4, time: 310)
        #expect(c.unread(for: "cid") == 4 && c.unread(for: "dan") == 1)
        _ = c.removed(by: "ann", sentTime: 310)
        #expect(c.unread(for: "cid") == 3)
        // She comes back with her count: her own messages never count for her.
        _ = c.admit(["ann"], now: 600)
        #expect(c.side("ann").sentCount == 2 && c.unread(for: "ann") == 0 && c.formerSent.isEmpty)
        #expect(c.mayAdd("bob") && !c.mayAdd("cid") && !c.mayAdd("eve"))
        c.membersMayAdd = true
        #expect(c.mayAdd("cid"))
    }

    @Test func aGroupIndexFollowsItsMembers() {
        var all = DirectConversations()
        var c = group()
        all.add(c)
        c.dismiss("cid")
        _ = c.admit(["dan"], now: 1)
        all.add(c)
        #expect(all.conversations(of: "cid").isEmpty && all.conversations(of: "dan").map(\.id) == [7])
        #expect(HomeMap(loops: 4).home(of: c) == HomeMap(loops: 4).home(guild: 7))
    }

    @Test func blocksAreKeptPerPairAndForgottenWithTheirShard() {
        var all = DirectConversations()
        all.setBlock("ann", "eve", true)
        all.setBlock("bob", "eve", true)
        all.setBlock("bob", "zed", true)
        #expect(all.blocks("ann", "eve") && !all.blocks("eve", "ann") && all.blocked(by: "bob") == ["eve", "zed"])
        all.forgetBlocks { a, b in a == "bob" && b == "zed" }
        #expect(all.blocked(by: "bob") == ["eve"] && !all.blocks("bob", "zed") && all.blocks("ann", "eve"))
        all.setBlock("bob", "eve", false)
        #expect(all.blocked(by: "bob").isEmpty)
    }
}

@Suite struct DirectVerdictTests {
    func part(_ user: UserID, home: Bool = false, only: Bool = false, shares: Bool = false) -> DirectVerdict {
        DirectVerdict(user: user, home: home, serverMatesOnly: only, sharesAServer: shares)
    }

    @Test func theUsersHomeDecidesAndAnyHomeWithASharedServerLetsIn() {
        #expect(DirectVerdict.allows([part("bob", shares: true)], for: "bob", complete: true) == nil, "no word from bob's home")
        #expect(DirectVerdict.allows([part("bob", home: true)], for: "bob", complete: false) == true, "bob takes anyone's")
        let restricted = part("bob", home: true, only: true)
        #expect(DirectVerdict.allows([restricted], for: "bob", complete: true) == false)
        #expect(DirectVerdict.allows([restricted], for: "bob", complete: false) == nil, "a home that did not answer may hold a shared server")
        #expect(DirectVerdict.allows([restricted, part("bob", shares: true)], for: "bob", complete: false) == true)
        #expect(DirectVerdict.allows([restricted, part("carol", shares: true)], for: "bob", complete: true) == false, "another user's part")
    }
}
