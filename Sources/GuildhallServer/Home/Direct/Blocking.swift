// Blocking (docs/features.md "Blocking"), at the home of the direct
// conversation between the blocker and the blocked, whether or not the two
// ever opened it: the place that decides a direct message decides the
// block with it. A blocked user's direct messages to the blocker are stored
// for them and answered as any is, but are withheld from the blocker
// (DirectMessages.swift: no inbox item, no live copy, no unread count;
// hidden from the blocker's history, lookups and search), and so is their
// typing. To the blocked user it is exactly a conversation with someone who
// never reads. The blocker may not write to the blocked until they unblock.
// Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

extension UserHome {
    func block(_ r: GHBlockUser, id: UInt64, from s: HomeSession) { setBlock(r.userID, blocks: true, id: id, from: s) }

    func unblock(_ r: GHUnblockUser, id: UInt64, from s: HomeSession) { setBlock(r.userID, blocks: false, id: id, from: s) }

    private func setBlock(_ user: UserID, blocks: Bool, id: UInt64, from s: HomeSession) {
        if let problem = Validation.userIDProblem(user) { return s.fail(id, .badRequest("user_id: \(problem)")) }
        guard user != s.user else { return s.fail(id, .badRequest("you cannot block yourself")) }
        guard directs.blocks(s.user, user) != blocks else { return s.respond(id, .ok(GHOk())) }
        var e = Effects(writes: [.directBlock(blocker: s.user, blocked: user, blocks: blocks)], reply: .ok)
        e.changes = [.blockSet(blocker: s.user, blocked: user, blocks: blocks)]
        runner.carryOut(e, answering: id, to: s)
    }

    /// At every home: the users the caller blocks among the pairs held here.
    func listBlocked(id: UInt64, from s: HomeSession) {
        var list = GHUserIDs()
        list.userIds = directs.blocked(by: s.user).sorted()
        s.respond(id, .userIds(list))
    }
}
