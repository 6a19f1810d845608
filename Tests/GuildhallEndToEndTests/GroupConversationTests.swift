// Group conversations (docs/features.md "Group conversations") through the
// SDK: messages, delivery and read receipts per member with "read by k of
// N", unread counts, typing and offline sync as in a pair; who may add,
// remove and rename; one removed or gone sees it no more; everything holds
// across a restart; and bad input is refused, changing nothing.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct GroupConversationTests {
    @Test func aGroupCarriesMessagesReceiptsAndUnreadPerMember() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, aliceHeard) = try await server.client("alice")
        let (bob, bobHeard) = try await server.client("bob")
        let (carol, carolHeard) = try await server.client("carol")
        let group = try await alice.directs.createGroup(named: "Trio", with: ["carol", "bob", "bob"])
        #expect(group.isGroup && group.name == "Trio" && group.ownerID == "alice" && group.memberIds == ["alice", "bob", "carol"])
        #expect(group.peerID.isEmpty && !group.membersMayAdd)
        let told = try await carolHeard.notification(.conversationUpdated)
        #expect(told.conversation.memberIds == ["alice", "bob", "carol"] && told.actorID == "alice" && told.channelID == group.conversationID)

        // alice writes; both others get it live and say "delivered" (the SDK's default).
        let first = try await alice.directs.send("hello both", inConversation: group.conversationID)
        #expect(first.channelID == group.conversationID && first.serverID == 0 && first.recipientID.isEmpty)
        #expect(first.sentStatus == .sent && first.recipientCount == 2 && first.deliveredCount == 0)
        for heard in [bobHeard, carolHeard] { _ = try await heard.message { $0.uid == first.uid } }
        try await waitUntil("delivered to both") { try await alice.messages.get([first.uid]).first?.deliveredCount == 2 }
        #expect(try await alice.directs.sentStatus([first.uid]) == [.delivered])

        // bob answers; carol's unread counts both; bob reads by time: alice and carol hear of it.
        let second = try await bob.directs.send("hi alice", inConversation: group.conversationID)
        _ = try await carolHeard.message { $0.uid == second.uid }
        #expect(try await carol.directs.list().first { $0.conversationID == group.conversationID }?.unreadCount == 2)
        _ = try await bob.directs.sendReadReceipt(conversation: group.conversationID)
        for heard in [aliceHeard, carolHeard] {
            _ = try await waitFor("bob's read receipt") { heard.events.withLock { $0 }.first { if case .readReceipt(_, _, "bob", _) = $0 { true } else { false } } }
        }
        let readByOne = try #require(try await alice.messages.get([first.uid]).first)
        #expect(readByOne.readCount == 1 && readByOne.recipientCount == 2 && readByOne.sentStatus == .delivered, "read by 1 of 2")
        _ = try await carol.directs.ackConversationRead(group.conversationID)
        let readByAll = try #require(try await alice.messages.history(of: group.conversationID).messages.first { $0.uid == first.uid })
        #expect(readByAll.readCount == 2 && readByAll.sentStatus == .read)
        #expect(try await carol.directs.list().first { $0.conversationID == group.conversationID }?.unreadCount == 0)
        #expect(try await alice.directs.list().first { $0.conversationID == group.conversationID }?.unreadCount == 1, "bob's message")

        // Typing reaches the other members.
        try await carol.directs.sendTyping(inConversation: group.conversationID)
        for heard in [aliceHeard, bobHeard] {
            _ = try await waitFor("carol typing") { heard.typings.first { $0.channelID == group.conversationID && $0.typers.contains { $0.userID == "carol" } } }
        }
        #expect(!carolHeard.typings.contains { $0.channelID == group.conversationID })

        // A member offline gets the group's messages and changes in their sync.
        carol.close()
        let third = try await alice.directs.send("carol, are you there?", inConversation: group.conversationID)
        _ = try await alice.directs.updateGroup(group.conversationID, name: "Trio ✓")
        let (phone, phoneHeard) = try await server.client("carol", device: "phone")
        let synced = try await phoneHeard.message { $0.uid == third.uid }
        #expect(synced.recipientID.isEmpty && synced.channelID == group.conversationID, "a group's message names no one recipient")
        let renamed = try await waitFor("the rename in carol's sync") { phoneHeard.notifications.first { $0.conversation.name == "Trio ✓" } }
        #expect(renamed.kind == .conversationUpdated)
        #expect(try await phone.directs.list().first { $0.conversationID == group.conversationID }?.name == "Trio ✓")
    }

    @Test func membersComeAndGoAsTheOwnerAllowsAndItHoldsAcrossARestart() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobHeard) = try await server.client("bob")
        let (carol, carolHeard) = try await server.client("carol")
        let group = try await alice.directs.createGroup(named: "Planning", with: ["bob", "carol"])
        let id = group.conversationID
        let before = try await bob.directs.send("before dan", inConversation: id)

        // Only the owner adds, until members may; one added sees the history with nothing unread.
        await expectError(.forbidden) { _ = try await carol.directs.addToGroup(id, ["dan"]) }
        await expectError(.forbidden) { _ = try await carol.directs.updateGroup(id, name: "mine") }
        _ = try await alice.directs.updateGroup(id, membersMayAdd: true)
        let withDan = try await carol.directs.addToGroup(id, ["dan", "bob"])
        #expect(withDan.memberIds == ["alice", "bob", "carol", "dan"])
        let (dan, danHeard) = try await server.client("dan")
        #expect(try await dan.messages.history(of: id).messages.map(\.uid) == [before.uid])
        #expect(try await dan.directs.list().first { $0.conversationID == id }?.unreadCount == 0)
        let toFour = try await dan.directs.send("hello all", inConversation: id)
        #expect(toFour.recipientCount == 3)
        for heard in [bobHeard, carolHeard] { _ = try await heard.message { $0.uid == toFour.uid } }

        // The owner removes carol: she is told, and the group is as if it never was to her.
        await expectError(.forbidden) { _ = try await bob.directs.removeFromGroup(id, "carol") }
        let withoutCarol = try await alice.directs.removeFromGroup(id, "carol")
        #expect(withoutCarol.memberIds == ["alice", "bob", "dan"])
        let gone = try await waitFor("carol told of her removal") { carolHeard.notifications.first { $0.kind == .conversationUpdated && !$0.conversation.memberIds.contains("carol") } }
        #expect(gone.actorID == "alice")
        await expectError(.notFound) { _ = try await carol.messages.history(of: id) }
        await expectError(.notFound) { _ = try await carol.directs.send("let me back", inConversation: id) }
        #expect(try await carol.directs.list().allSatisfy { $0.conversationID != id })

        // The owner leaves: the group passes to bob (first by id). Carol's messages still count for those who stay.
        try await alice.directs.leaveGroup(id)
        #expect(try await bob.directs.list().first { $0.conversationID == id }?.ownerID == "bob")
        await expectError(.notFound) { try await alice.directs.leaveGroup(id) }
        let unreadBefore = try await dan.directs.list().first { $0.conversationID == id }?.unreadCount

        try server.restart()
        let (bobAgain, _) = try await server.client("bob", device: "after")
        let (danAgain, danAgainHeard) = try await server.client("dan", device: "after")
        let after = try #require(try await bobAgain.directs.list().first { $0.conversationID == id })
        #expect(after.isGroup && after.name == "Planning" && after.ownerID == "bob" && after.memberIds == ["bob", "dan"] && after.membersMayAdd)
        #expect(try await danAgain.directs.list().first { $0.conversationID == id }?.unreadCount == unreadBefore)
        let later = try await bobAgain.directs.send("still here", inConversation: id)
        _ = try await danAgainHeard.message { $0.uid == later.uid }
        _ = danHeard
    }

    @Test func badInputIsRefusedAndChangesNothing() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        await expectError(.badRequest) { _ = try await alice.directs.createGroup(named: "Two", with: ["bob"]) }
        await expectError(.badRequest) { _ = try await alice.directs.createGroup(named: "Two", with: ["bob", "bob"]) }
        await expectError(.badRequest) { _ = try await alice.directs.createGroup(named: "Eleven", with: (1...10).map { "u\($0)" }) }
        await expectError(.badRequest) { _ = try await alice.directs.createGroup(named: "Me", with: ["alice", "bob", "carol"]) }
        await expectError(.badRequest) { _ = try await alice.directs.createGroup(named: " ", with: ["bob", "carol"]) }
        await expectError(.badRequest) { _ = try await alice.directs.createGroup(named: "tab\there", with: ["bob", "carol"]) }
        await expectError(.tooLarge) { _ = try await alice.directs.createGroup(named: String(repeating: "n", count: 101), with: ["bob", "carol"]) }
        await expectError(.badRequest) { _ = try await alice.directs.createGroup(named: "Bad", with: ["bob", ""]) }
        #expect(try await alice.directs.list().isEmpty, "nothing was made")

        let group = try await alice.directs.createGroup(named: "Full", with: (1...8).map { "u\($0)" })
        await expectError(.badRequest) { _ = try await alice.directs.addToGroup(group.conversationID, ["u9", "u10"]) }
        await expectError(.badRequest) { _ = try await alice.directs.addToGroup(group.conversationID, []) }
        await expectError(.badRequest) { _ = try await alice.directs.removeFromGroup(group.conversationID, "alice") }
        await expectError(.notFound) { _ = try await alice.directs.removeFromGroup(group.conversationID, "stranger") }
        await expectError(.tooLarge) { _ = try await alice.directs.updateGroup(group.conversationID, name: String(repeating: "n", count: 101)) }
        let unchanged = try await alice.directs.addToGroup(group.conversationID, ["u1"])
        #expect(unchanged.memberIds.count == 9 && unchanged.name == "Full")
        let full = try await alice.directs.addToGroup(group.conversationID, ["u9"])
        #expect(full.memberIds.count == 10)

        // A pair's conversation names no group.
        let pair = try await alice.directs.open(with: "bob")
        await expectError(.notFound) { _ = try await alice.directs.addToGroup(pair.conversationID, ["carol"]) }
        await expectError(.badRequest) {
            var r = GHSendDirectMessage()
            r.conversationID = group.conversationID; r.peerID = "bob"; r.body.text = "both"
            _ = try await alice.call(.sendDirectMessage(r))
        }
    }
}
