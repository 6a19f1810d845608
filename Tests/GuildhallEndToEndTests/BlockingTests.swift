// Blocking (docs/features.md "Blocking") through the SDK: a blocked user's
// direct messages are answered as any, and as to a user who never reads,
// but reach the blocker nowhere (live, offline sync, history, lookups,
// unread, search) and neither does their typing; the blocker may not write
// to them until they unblock; blocks are listed across homes, survive a
// restart, and refuse bad input.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct BlockingTests {
    @Test func aBlockedUsersMessagesAreAnsweredAsAnyAndReachTheBlockerNowhere() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (bob, bobHeard) = try await server.client("bob")
        let (eve, _) = try await server.client("eve")
        let before = try await eve.directs.send("hi bob", to: "bob")
        _ = try await bobHeard.message { $0.uid == before.uid }
        try await bob.directs.block("eve")
        let withheld = try await eve.directs.send("you cannot ignore me", to: "bob")
        let toNobody = try await eve.directs.send("you cannot ignore me", to: "nobody-ever")
        // To eve it is a message like one to a user who never comes.
        #expect(withheld.sentStatus == toNobody.sentStatus && withheld.sentStatus == .sent && withheld.recipientID == "bob")
        try await eve.directs.sendTyping(to: "bob")
        await expectError(.forbidden) { _ = try await bob.directs.send("go away", to: "eve") }
        // Bob reads everything: eve's withheld message stays SENT to her.
        let conversation = before.channelID
        _ = try await bob.directs.ackConversationRead(conversation)
        #expect(try await eve.directs.sentStatus([withheld.uid]) == [.sent])
        #expect(try await eve.messages.history(of: conversation).messages.map(\.uid) == [before.uid, withheld.uid])
        #expect(try await bob.messages.history(of: conversation).messages.map(\.uid) == [before.uid])
        #expect(try await bob.messages.get([withheld.uid]).isEmpty)
        #expect(try await bob.directs.list().first { $0.conversationID == conversation }?.unreadCount == 0)
        #expect(try await bob.messages.search("ignore", in: .conversation(conversation)).hits.isEmpty)
        #expect(try await eve.messages.search("ignore", in: .conversation(conversation)).hits.map(\.message.uid) == [withheld.uid])
        // Unblocked: what eve sends now reaches bob; what she sent meanwhile never does, live or in a new device's sync.
        try await bob.directs.unblock("eve")
        try await eve.directs.sendTyping(to: "bob")
        let after = try await eve.directs.send("sorry", to: "bob")
        _ = try await bobHeard.message { $0.uid == after.uid }
        _ = try await waitFor("eve's typing after the unblock") { bobHeard.typings.first { $0.typers.contains { $0.userID == "eve" } } }
        #expect(bobHeard.typings.filter { $0.typers.contains { $0.userID == "eve" } }.count == 1, "her typing while blocked reached no one")
        let (phone, phoneHeard) = try await server.client("bob", device: "phone")
        _ = try await phoneHeard.message { $0.uid == after.uid }
        #expect(!(bobHeard.messages + phoneHeard.messages).contains { $0.uid == withheld.uid })
        #expect(try await phone.directs.list().first { $0.conversationID == conversation }?.unreadCount == 1)
    }

    @Test func blocksAreListedAcrossHomesSurviveARestartAndRefuseBadInput() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let users = (1...6).map { "pest\($0)" }
        for u in users.reversed() { try await alice.directs.block(u) }
        try await alice.directs.block("pest3")
        #expect(try await alice.directs.blockedUsers() == users)
        try await alice.directs.unblock("pest2")
        try await alice.directs.unblock("never-blocked")
        await expectError(.badRequest) { try await alice.directs.block("alice") }
        await expectError(.badRequest) { try await alice.directs.block("") }
        try server.restart()
        let (again, aliceHeard) = try await server.client("alice", device: "after")
        #expect(try await again.directs.blockedUsers() == users.filter { $0 != "pest2" })
        let (pest, _) = try await server.client("pest1")
        let hidden = try await pest.directs.send("still here", to: "alice")
        let (friend, _) = try await server.client("pest2")
        let seen = try await friend.directs.send("hello again", to: "alice")
        _ = try await aliceHeard.message { $0.uid == seen.uid }
        #expect(!aliceHeard.messages.contains { $0.uid == hidden.uid })
    }
}
