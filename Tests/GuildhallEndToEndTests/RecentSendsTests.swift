// The compact de-duplication table on its own: what a lookup finds while a
// send commits, after, and once the window passed; and that a hash
// collision only ever points at a UID (the server compares the stored
// message before answering with it).

import GuildhallCore
import Testing
@testable import GuildhallServer

@Suite struct RecentSendsTests {
    static func record(_ uid: MessageUID, sender: UserID = "alice", clientID: String) -> MessageRecord {
        MessageRecord(uid: uid, serverID: 1, channelID: 2, seq: 1, sender: sender, sentTime: UIDGenerator.millis(of: uid),
                      content: .text("x"), mentions: [], mentionAll: false, needReceipt: false, clientID: clientID)
    }

    @Test func aSendIsInFlightThenCommittedThenExpired() {
        var recent = RecentSends()
        let uid = UIDGenerator.floor(atMillis: 1_800_000_000_000)
        #expect(recent.lookup(sender: "alice", clientID: "c-1") == nil)
        recent.sending(sender: "alice", clientID: "c-1")
        guard case .inFlight? = recent.lookup(sender: "alice", clientID: "c-1") else { Issue.record("not in flight"); return }
        #expect(recent.lookup(sender: "bob", clientID: "c-1") == nil, "client ids are per sender")
        #expect(recent.settle(Self.record(uid, clientID: "c-1"), committed: true).isEmpty)
        guard case .committed(let found)? = recent.lookup(sender: "alice", clientID: "c-1") else { Issue.record("not kept"); return }
        #expect(found == uid)
        recent.expire(before: 1_800_000_000_000)
        #expect(recent.count.committed == 1, "the window has not passed")
        recent.expire(before: 1_800_000_000_001)
        #expect(recent.lookup(sender: "alice", clientID: "c-1") == nil)
    }

    @Test func aFailedCommitIsForgotten() {
        var recent = RecentSends()
        recent.sending(sender: "alice", clientID: "c-1")
        _ = recent.settle(Self.record(99 << 22, clientID: "c-1"), committed: false)
        #expect(recent.lookup(sender: "alice", clientID: "c-1") == nil)
        #expect(recent.count == (0, 0))
    }

    @Test func aCollisionFindsOnlyAUIDToCheck() {
        var recent = RecentSends(hash: { _, _ in 42 })
        recent.remember(sender: "alice", clientID: "c-1", uid: 5 << 22)
        // Another sender's client id hashes the same: the table points at alice's
        // UID, and the server, reading it, sees that sender and client id differ.
        guard case .committed(let uid)? = recent.lookup(sender: "bob", clientID: "other") else { Issue.record("no entry"); return }
        #expect(uid == 5 << 22)
    }
}
