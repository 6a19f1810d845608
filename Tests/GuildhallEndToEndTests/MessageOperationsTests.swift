// Message operations (docs/features.md), one test per rule,
// through the SDK: recall and its window, edit, delete, replies, threads,
// quick comments and their limits, unread after a removal, offline sync of
// operations, receipts of removed messages, and history and reading by time.

import Foundation
import GuildhallClient
import GuildhallServer
import GuildhallWire
import Testing

@Suite struct MessageOperationsTests {
    /// alice owns a small server with bob, who hears everything in it.
    func pair(_ tweak: @escaping (inout Settings) throws -> Void = { _ in }) async throws
        -> (TestServer, GuildhallClient, GuildhallClient, Recorder, GHChannelInfo) {
        let server = try TestServer(tweak)
        let (alice, _) = try await server.client("alice")
        let (bob, heard) = try await server.client("bob")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        return (server, alice, bob, heard, c)
    }

    @Test func theSenderRecallsWithinTheWindowAndNotAfterIt() async throws {
        let (server, alice, bob, heard, c) = try await pair()
        defer { server.stop() }
        let m = try await alice.messages.send("oops", to: c.channelID)
        let recalled = try await alice.messages.recall(m.uid, in: c.channelID)
        #expect(recalled.removal.kind == .recalled && recalled.removal.by == "alice" && recalled.body.text.isEmpty)
        let (update, _) = try await heard.update(.recalledMessage, of: m.uid)
        #expect(update.actorID == "alice" && update.message.removal.kind == .recalled)
        let page = try await bob.messages.history(of: c.channelID)
        #expect(page.messages.map(\.removal.kind) == [.recalled], "history shows the tombstone")
        #expect(page.messages[0].body.text.isEmpty)
        await expectError(.conflict) { _ = try await alice.messages.recall(m.uid, in: c.channelID) }

        let late = try await bob.messages.send("regret", to: c.channelID)
        server.clock.advance(ms: 121_000)
        do {
            _ = try await bob.messages.recall(late.uid, in: c.channelID)
            Issue.record("recalled past the window")
        } catch let e as GuildhallError {
            #expect(e.code == .forbidden && e.message.contains("recall window (120 s)"))
        }
        // The owner holds RECALL_OTHERS: any time, anyone's.
        #expect(try await alice.messages.recall(late.uid, in: c.channelID).removal.by == "alice")
        await expectError(.notFound) { _ = try await bob.messages.recall(late.uid + 1, in: c.channelID) }
    }

    @Test func editingShowsTheNewBodyItsTimeAndItsCount() async throws {
        let (server, alice, bob, heard, c) = try await pair()
        defer { server.stop() }
        let m = try await alice.messages.send("frist", to: c.channelID)
        _ = try await alice.messages.edit(m.uid, in: c.channelID, text: "first")
        let edited = try await alice.messages.edit(m.uid, in: c.channelID, text: "first!")
        #expect(edited.body.text == "first!" && edited.editCount == 2 && edited.editedTime >= m.sentTime)
        _ = try await waitFor("both edits") { heard.updates.filter { $0.update.kind == .editedMessage }.count == 2 ? true : nil }
        #expect(heard.updates.last?.update.message.body.text == "first!")
        #expect(try await bob.messages.history(of: c.channelID).messages.map(\.body.text) == ["first!"])
        await expectError(.forbidden) { _ = try await bob.messages.edit(m.uid, in: c.channelID, text: "mine now") }
    }

    @Test func deletingNeedsTheSenderOrTheDeleteBit() async throws {
        let (server, alice, bob, _, c) = try await pair()
        defer { server.stop() }
        let hers = try await alice.messages.send("hers", to: c.channelID)
        let his = try await bob.messages.send("his", to: c.channelID)
        await expectError(.forbidden) { _ = try await bob.messages.delete(hers.uid, in: c.channelID) }
        #expect(try await bob.messages.delete(his.uid, in: c.channelID).removal.kind == .deleted)
        let m = try await bob.messages.send("again", to: c.channelID)
        #expect(try await alice.messages.delete(m.uid, in: c.channelID).removal.kind == .deleted, "the owner holds DELETE_OTHERS")
        await expectError(.conflict) { _ = try await alice.messages.delete(m.uid, in: c.channelID) }
        #expect(try await alice.messages.history(of: c.channelID).messages.map(\.removal.kind) == [.unspecified, .deleted, .deleted])
    }

    /// README "What clients receive": a removed message stops counting as unread and as a
    /// mention, for subscribers (their update carries the new numbers) and in queries.
    @Test func aRecalledMessageNoLongerCountsAsUnreadOrAsAMention() async throws {
        let server = try largeServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, heard) = try await server.client("bob")
        let (carol, carolHeard) = try await server.client("carol")
        let (g, c) = try await guild(server, owner: alice, members: [bob, carol])
        try await bob.sub(.channelMsg, g.serverID, [c.channelID])
        try await carol.sub(.channelUnreadCount, g.serverID, [c.channelID])
        _ = try await alice.messages.send("one", to: c.channelID)
        let mention = try await alice.messages.send("@bob two", to: c.channelID, mentions: ["bob", "carol"])
        let three = try await alice.messages.send("three", to: c.channelID)
        _ = try await heard.message { $0.uid == three.uid }
        let before = try await bob.messages.unread([c.channelID])[0]
        #expect(before.unreadCount == 3 && before.mentionedCount == 1)

        _ = try await alice.messages.recall(mention.uid, in: c.channelID)
        let (_, unread) = try await heard.update(.recalledMessage, of: mention.uid)
        #expect(unread?.unreadCount == 2 && unread?.mentionedCount == 0, "the update carries bob's numbers after it")
        let after = try await bob.messages.unread([c.channelID])[0]
        #expect(after.unreadCount == 2 && after.mentionedCount == 0 && after.lastSeq == three.seq)
        let corrected = try await waitFor("carol's corrected count") { carolHeard.unreads.first { $0.unreadCount == 2 } }
        #expect(corrected.mentionedCount == 0)
        #expect(try await carol.messages.unread([c.channelID])[0].unreadCount == 2)
        // Reading up to the last message leaves nothing, and a later message counts from there.
        _ = try await bob.messages.markRead(c.channelID)
        _ = try await alice.messages.send("four", to: c.channelID)
        #expect(try await bob.messages.unread([c.channelID])[0].unreadCount == 1)
    }

    @Test func quickCommentsFromTwoUsersAndARepeatedAdd() async throws {
        let (server, alice, bob, heard, c) = try await pair()
        defer { server.stop() }
        let m = try await alice.messages.send("vote", to: c.channelID)
        _ = try await alice.messages.react(m.uid, in: c.channelID, type: 1)
        let both = try await bob.messages.react(m.uid, in: c.channelID, type: 1)
        #expect(both.reactions.map { [$0.type, $0.count] } == [[1, 2]] && both.reactions[0].mine)
        let again = try await bob.messages.react(m.uid, in: c.channelID, type: 1)
        #expect(again.reactions.map(\.count) == [2], "a repeated add is a no-op")
        _ = try await bob.messages.react(m.uid, in: c.channelID, type: 7)
        let seen = try await alice.messages.get([m.uid])[0].reactions
        #expect(seen.map { [$0.type, $0.count] } == [[1, 2], [7, 1]])
        #expect(seen.map(\.mine) == [true, false], "mine: alice reacted with 1, not 7")
        #expect(try await alice.messages.unreact(m.uid, in: c.channelID, type: 1).reactions.map(\.count) == [1, 1])
        _ = try await waitFor("alice's add and removal") {
            heard.updates.filter { $0.update.actorID == "alice" }.map(\.update.kind) == [.reactionAdded, .reactionRemoved] ? true : nil
        }
        #expect(!heard.updates.contains { $0.update.actorID == "bob" }, "the actor's own session gets answers, not events")
    }

    @Test func whoReactedIsListedEarliestFirstForThoseWhoMayReact() async throws {
        let (server, alice, bob, _, c) = try await pair()
        defer { server.stop() }
        let m = try await alice.messages.send("lunch?", to: c.channelID)
        _ = try await alice.messages.react(m.uid, in: c.channelID, type: 3)
        _ = try await bob.messages.react(m.uid, in: c.channelID, type: 3)
        _ = try await alice.messages.react(m.uid, in: c.channelID, type: 4)
        let three = try await alice.messages.reactors(of: m.uid, in: c.channelID, type: 3)
        #expect(three.userIds == ["alice", "bob"] && three.total == 2, "earliest first (the same millisecond: by id)")
        let first = try await bob.messages.reactors(of: m.uid, in: c.channelID, type: 3, limit: 1)
        #expect(first.userIds == ["alice"] && first.total == 2, "a page holds the first, the total counts all")
        #expect(try await bob.messages.reactors(of: m.uid, in: c.channelID, type: 9).userIds.isEmpty)
        _ = try await alice.messages.unreact(m.uid, in: c.channelID, type: 3)
        #expect(try await bob.messages.reactors(of: m.uid, in: c.channelID, type: 3).userIds == ["bob"])
        await expectError(.badRequest) { _ = try await bob.messages.reactors(of: m.uid, in: c.channelID, type: 0) }
        await expectError(.limitReached) { _ = try await bob.messages.reactors(of: m.uid, in: c.channelID, type: 3, limit: 101) }
        // One who may not see the channel is answered as for a message that is not there.
        let (carol, _) = try await server.client("carol")
        await expectError(.notFound) { _ = try await carol.messages.reactors(of: m.uid, in: c.channelID, type: 3) }
        await expectError(.notFound) { _ = try await bob.messages.reactors(of: m.uid + 1000, in: c.channelID, type: 3) }
        // A direct message's reactors, for the two of the conversation.
        let dm = try await alice.directs.send("ok", to: "bob")
        _ = try await bob.messages.react(dm.uid, in: dm.channelID, type: 1)
        #expect(try await alice.messages.reactors(of: dm.uid, in: dm.channelID, type: 1).userIds == ["bob"])
        await expectError(.notFound) { _ = try await carol.messages.reactors(of: dm.uid, in: dm.channelID, type: 1) }
    }

    @Test func quickCommentLimitsExactlyReachedThenOneOver() async throws {
        let (server, alice, bob, _, c) = try await pair {
            $0.reactionTypesPerMessage = 3
            $0.reactionsPerUserPerMessage = 2
        }
        defer { server.stop() }
        let m = try await alice.messages.send("limits", to: c.channelID)
        _ = try await alice.messages.react(m.uid, in: c.channelID, type: 1)
        _ = try await alice.messages.react(m.uid, in: c.channelID, type: 2)
        await expectError(.limitReached) { _ = try await alice.messages.react(m.uid, in: c.channelID, type: 3) }
        _ = try await bob.messages.react(m.uid, in: c.channelID, type: 3)
        await expectError(.limitReached) { _ = try await bob.messages.react(m.uid, in: c.channelID, type: 4) }
        _ = try await bob.messages.react(m.uid, in: c.channelID, type: 1)
        await expectError(.badRequest) { _ = try await bob.messages.react(m.uid, in: c.channelID, type: 0) }
    }

    @Test func aReplyCarriesItsQuoteAndAThreadCountsItsReplies() async throws {
        let (server, alice, bob, _, c) = try await pair()
        defer { server.stop() }
        let root = try await alice.messages.send("what shall we build?", to: c.channelID)
        let reply = try await bob.messages.send("a guildhall", to: c.channelID, replyTo: root.uid)
        #expect(reply.replyTo.messageUid == root.uid && reply.replyTo.senderID == "alice" && reply.replyTo.excerpt == "what shall we build?")
        var inThread: [UInt64] = []
        for n in 1...3 { inThread.append(try await bob.messages.send("idea \(n)", to: c.channelID, threadRoot: root.uid).uid) }
        let counted = try await alice.messages.get([root.uid])[0]
        #expect(counted.threadReplyCount == 3 && counted.threadLastReplyTime > 0)
        let page = try await alice.messages.thread(root.uid, in: c.channelID)
        #expect(page.messages.map(\.uid) == inThread && page.messages.allSatisfy { $0.threadRoot == root.uid })
        #expect(try await alice.messages.thread(root.uid, in: c.channelID, afterSeq: page.messages[0].seq, limit: 1).messages.map(\.uid) == [inThread[1]])
        await expectError(.badRequest) { _ = try await bob.messages.send("nested", to: c.channelID, threadRoot: inThread[0]) }
        await expectError(.notFound) { _ = try await bob.messages.send("nowhere", to: c.channelID, replyTo: root.uid + 99_999) }
        _ = try await alice.messages.recall(reply.uid, in: c.channelID)
        await expectError(.conflict) { _ = try await bob.messages.send("to a recalled one", to: c.channelID, replyTo: reply.uid) }
    }

    /// Offline sync carries operations on messages addressed to the user:
    /// a mention's recall, and everything done to a direct message.
    @Test func offlineSyncCarriesOperationsOnMessagesAddressedToTheUser() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        bob.close()
        let mention = try await alice.messages.send("@bob look", to: c.channelID, mentions: ["bob"])
        _ = try await alice.messages.recall(mention.uid, in: c.channelID)
        let dm = try await alice.directs.send("psst", to: "bob")
        _ = try await alice.messages.edit(dm.uid, in: dm.channelID, text: "psst!")
        _ = try await alice.messages.react(dm.uid, in: dm.channelID, type: 5)
        let (_, later) = try await server.client("bob", device: "tablet")
        _ = try await waitFor("the sync") { later.syncCompletions > 0 ? true : nil }
        let kinds = later.updates.map { [$0.update.message.uid: $0.update.kind] }
        #expect(kinds == [[mention.uid: .recalledMessage], [dm.uid: .editedMessage], [dm.uid: .reactionAdded]])
    }

    @Test func operationsOnADirectMessageReachThePeerAndTheActorsOtherDevices() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (laptop, laptopHeard) = try await server.client("alice", device: "laptop")
        let (bob, bobHeard) = try await server.client("bob")
        let dm = try await alice.directs.send("meet at 5", to: "bob")
        _ = try await alice.messages.edit(dm.uid, in: dm.channelID, text: "meet at 6")
        #expect(try await bobHeard.update(.editedMessage, of: dm.uid).update.message.body.text == "meet at 6")
        _ = try await laptopHeard.update(.editedMessage, of: dm.uid)
        await expectError(.forbidden) { _ = try await bob.messages.edit(dm.uid, in: dm.channelID, text: "never") }
        _ = try await bob.messages.react(dm.uid, in: dm.channelID, type: 2)
        _ = try await laptop.messages.delete(dm.uid, in: dm.channelID)
        _ = try await bobHeard.update(.deletedMessage, of: dm.uid)
        #expect(try await bob.messages.history(of: dm.channelID).messages.map(\.removal.kind) == [.deleted])
        await expectError(.notFound) { _ = try await (try await server.client("carol")).0.messages.recall(dm.uid, in: dm.channelID) }
    }

    @Test func aRemovedMessageTakesNoMoreReceiptResponsesAndItsInfoSaysSo() async throws {
        let (server, alice, bob, heard, c) = try await pair()
        defer { server.stop() }
        let m = try await alice.messages.send("read me", to: c.channelID, needReceipt: true)
        _ = try await heard.message { $0.uid == m.uid }
        _ = try await alice.messages.recall(m.uid, in: c.channelID)
        await expectError(.conflict) { _ = try await bob.receipts.respond(channel: c.channelID, [m.uid]) }
        #expect(try await alice.receipts.info([m.uid])[0].removed)
    }

    /// History pages and reading by time as well as by seq.
    @Test func historyAndMarkReadGoByTime() async throws {
        let (server, alice, bob, _, c) = try await pair()
        defer { server.stop() }
        var sent: [GHChannelMessage] = []
        for n in 0..<4 {
            sent.append(try await alice.messages.send("at \(n)", to: c.channelID))
            server.clock.advance(ms: 10_000)
        }
        let cut = sent[2].sentTime
        #expect(try await bob.messages.history(of: c.channelID, time: cut).messages.map(\.uid) == [sent[0].uid, sent[1].uid])
        #expect(try await bob.messages.history(of: c.channelID, time: cut, after: true).messages.map(\.uid) == [sent[3].uid])
        #expect(try await bob.messages.history(of: c.channelID, time: 1).messages.isEmpty)
        let read = try await bob.messages.markRead(c.channelID, time: cut)
        #expect(read.readSeq == sent[2].seq && read.unreadCount == 1)
    }

    @Test func everyOperationSurvivesARestart() async throws {
        let (server, alice, bob, _, c) = try await pair()
        defer { server.stop() }
        let (carol, _) = try await server.client("carol")
        _ = try await carol.servers.join(c.serverID)
        let root = try await alice.messages.send("root", to: c.channelID)
        let gone = try await alice.messages.send("gone", to: c.channelID)
        _ = try await bob.messages.send("in thread", to: c.channelID, threadRoot: root.uid)
        _ = try await alice.messages.edit(root.uid, in: c.channelID, text: "root, edited")
        _ = try await bob.messages.react(root.uid, in: c.channelID, type: 9)
        _ = try await alice.messages.recall(gone.uid, in: c.channelID)
        #expect(try await carol.messages.unread([c.channelID])[0].unreadCount == 2, "three sent, one recalled")
        try server.restart()
        let (bob2, _) = try await server.client("bob", device: "after")
        let page = try await bob2.messages.history(of: c.channelID).messages
        #expect(page.map(\.body.text) == ["root, edited", "", "in thread"])
        #expect(page[0].editCount == 1 && page[0].threadReplyCount == 1 && page[0].reactions.map(\.mine) == [true])
        #expect(page[1].removal.kind == .recalled)
        let (carol2, _) = try await server.client("carol", device: "after")
        #expect(try await carol2.messages.unread([c.channelID])[0].unreadCount == 2, "the removed seq is still left out")
    }

    /// A direct message recalled or deleted stops counting as unread for the peer, also after a restart.
    @Test func aRemovedDirectMessageNoLongerCountsAsUnread() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let first = try await alice.directs.send("one", to: "bob")
        let second = try await alice.directs.send("two", to: "bob")
        #expect(try await bob.directs.list().first?.unreadCount == 2)
        _ = try await alice.messages.recall(second.uid, in: second.channelID)
        #expect(try await bob.directs.list().first?.unreadCount == 1)
        _ = try await bob.directs.sendReadReceipt(conversation: first.channelID)
        _ = try await alice.messages.delete(first.uid, in: first.channelID)
        #expect(try await bob.directs.list().first?.unreadCount == 0, "a read one leaves the count as it was")
        _ = try await alice.directs.send("three", to: "bob")
        #expect(try await bob.directs.list().first?.unreadCount == 1)
        try server.restart()
        let (bob2, _) = try await server.client("bob", device: "after")
        #expect(try await bob2.directs.list().first?.unreadCount == 1)
    }
}
