// Direct (one-to-one) conversations (docs/features.md), one test per rule, end
// to end through the SDK against the real server: open and list, messages
// shaped like channel messages, delivery receipts (and the setting), read
// receipts by time, per message and for the whole conversation, sent status
// after a reconnect and a restart, and offline sync of messages and receipts.

import Foundation
import GuildhallClient
@testable import GuildhallServer
import GuildhallWire
import Testing

@Suite struct DirectConversationsConformanceTests {
    @Test func conversationsOpenOncePerPairAndListNewestFirst() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let withBob = try await alice.directs.open(with: "bob")
        #expect(withBob.peerID == "bob" && withBob.unreadCount == 0)
        #expect(try await alice.directs.open(with: "bob").conversationID == withBob.conversationID)
        #expect(try await bob.directs.open(with: "alice").conversationID == withBob.conversationID)
        let withCarol = try await alice.directs.open(with: "carol")
        _ = try await alice.directs.send("hi bob", to: "bob")
        #expect(try await alice.directs.list().map(\.conversationID) == [withBob.conversationID, withCarol.conversationID])
        #expect(try await bob.directs.list().map(\.peerID) == ["alice"])
        await expectError(.badRequest) { _ = try await alice.directs.open(with: "alice") }
        await expectError(.badRequest) { _ = try await alice.directs.open(with: "") }
    }

    /// A change every home answers in part (delivery) in flight beside a
    /// request one home answers (opening a conversation): each gets its own
    /// answer. Gather ids once counted from 1 like the SDK's, and a home took
    /// a part's pending id for the other request's answer.
    @Test func aGatheredChangeBesideAnotherRequestKeepsEachAnswerItsOwn() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        for round in 0..<20 {
            let m = try await bob.directs.send("round \(round)", to: "alice")
            var delivered = GHMarkDelivered()
            delivered.messageUids = [m.uid]
            async let marked = alice.call(.markDelivered(delivered))
            async let opened = alice.directs.open(with: "peer\(round)")
            let (answer, conversation) = try await (marked, opened)
            guard case .ok = answer else { Issue.record("delivery answered \(answer)"); return }
            #expect(conversation.peerID == "peer\(round)")
        }
    }

    @Test func directMessagesHaveTheShapeOfChannelMessagesAndStayBetweenTheTwo() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (carol, _) = try await server.client("carol")
        let sent = try await alice.directs.send("just us", to: "bob", clientID: "c-1")
        #expect(sent.serverID == 0 && sent.recipientID == "bob" && sent.senderID == "alice" && sent.seq == 1 && sent.uid != 0)
        #expect(sent.sentStatus == .sent || sent.sentStatus == .delivered)
        let got = try await bobEvents.message { $0.uid == sent.uid }
        #expect(got.channelID == sent.channelID && got.body.text == "just us" && got.recipientID == "bob")
        #expect(try await alice.directs.send("just us", to: "bob", clientID: "c-1").uid == sent.uid, "a resend with the same client id is the same message")
        let history = try await bob.messages.history(of: sent.channelID)
        #expect(history.messages.map(\.uid) == [sent.uid])
        await expectError(.notFound) { _ = try await carol.messages.history(of: sent.channelID) }
        #expect(try await carol.messages.get([sent.uid]).isEmpty)
    }

    @Test func aSessionOfTheRecipientReceivingItMakesItDelivered() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, aliceEvents) = try await server.client("alice")
        let (_, bobEvents) = try await server.client("bob")
        let m = try await alice.directs.send("are you there?", to: "bob")
        _ = try await bobEvents.message { $0.uid == m.uid }
        let delivered = try await waitFor("alice hears delivered") {
            aliceEvents.events.withLock { $0.compactMap { if case .delivered(let uids, let conv, let peer) = $0 { (uids, conv, peer) } else { nil } }.first }
        }
        #expect(delivered.0 == [m.uid] && delivered.1 == m.channelID && delivered.2 == "bob")
        #expect(try await alice.directs.sentStatus([m.uid]) == [.delivered])
    }

    @Test func deliveryReceiptsAreASetting() async throws {
        let server = try TestServer { $0.deliveryReceipts = "off" }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let m = try await alice.directs.send("no receipts here", to: "bob")
        _ = try await bobEvents.message { $0.uid == m.uid }
        _ = try await bob.directs.list()  // after bob's delivery acknowledgement on the same connection
        #expect(try await alice.directs.sentStatus([m.uid]) == [.sent])
    }

    @Test func aReadReceiptByTimeReadsEverythingSentAtOrBeforeIt() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, aliceEvents) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        var sent: [GHChannelMessage] = []
        for i in 0..<3 {
            server.clock.advance(ms: 5)
            sent.append(try await alice.directs.send("m\(i)", to: "bob"))
        }
        _ = try await bobEvents.message { $0.uid == sent[2].uid }
        let conversation = try await bob.directs.sendReadReceipt(conversation: sent[0].channelID, time: sent[1].sentTime)
        #expect(conversation.unreadCount == 1 && conversation.readTime == sent[1].sentTime)
        let notice = try await waitFor("alice's read receipt notification") {
            aliceEvents.events.withLock { $0.compactMap { if case .readReceipt(let t, let target, let reader, let time) = $0 { (t, target, reader, time) } else { nil } }.first }
        }
        #expect(notice.0 == .direct && notice.1 == "bob" && notice.2 == "bob" && notice.3 == sent[1].sentTime)
        #expect(try await alice.directs.sentStatus(sent.map(\.uid)) == [.read, .read, .delivered])
    }

    @Test func aReadReceiptPerMessageReadsThatMessageOnly() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, aliceEvents) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let first = try await alice.directs.send("one", to: "bob")
        let second = try await alice.directs.send("two", to: "bob")
        _ = try await bobEvents.message { $0.uid == second.uid }
        try await bob.directs.ackMessageRead(second.uid)
        let read = try await waitFor("alice hears read") {
            aliceEvents.events.withLock { $0.compactMap { if case .read(let uids, _, let peer) = $0 { (uids, peer) } else { nil } }.first }
        }
        #expect(read.0 == [second.uid] && read.1 == "bob")
        #expect(try await alice.directs.sentStatus([first.uid, second.uid]) == [.delivered, .read])
        await expectError(.notFound) { try await alice.directs.ackMessageRead(second.uid) }  // not sent to alice
    }

    @Test func readingTheWholeConversationZeroesUnreadAndReadsEverything() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, aliceEvents) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        var sent: [GHChannelMessage] = []
        for i in 0..<4 { sent.append(try await alice.directs.send("m\(i)", to: "bob")) }
        _ = try await bobEvents.message { $0.uid == sent[3].uid }
        #expect(try await bob.directs.list().first?.unreadCount == 4)
        let after = try await bob.directs.ackConversationRead(sent[0].channelID)
        #expect(after.unreadCount == 0)
        let who = try await waitFor("alice hears the conversation was read") {
            aliceEvents.events.withLock { $0.compactMap { if case .conversationRead(let peer, let conv) = $0 { (peer, conv) } else { nil } }.first }
        }
        #expect(who.0 == "bob" && who.1 == sent[0].channelID)
        #expect(try await alice.directs.sentStatus(sent.map(\.uid)) == [.read, .read, .read, .read])
        #expect(try await bob.directs.list().first?.unreadCount == 0)
    }

    @Test func sentStatusIsRightAfterAReconnectAndARestart() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, aliceEvents) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let read = try await alice.directs.send("read it", to: "bob")
        let delivered = try await alice.directs.send("got it", to: "bob")
        _ = try await bobEvents.message { $0.uid == delivered.uid }
        try await bob.directs.ackMessageRead(read.uid)
        _ = try await waitFor("delivered") {
            aliceEvents.events.withLock { $0.contains { if case .delivered(let uids, _, _) = $0 { uids.contains(delivered.uid) } else { false } } } ? true : nil
        }
        _ = try await waitFor("read") {
            aliceEvents.events.withLock { $0.contains { if case .read(let uids, _, _) = $0 { uids.contains(read.uid) } else { false } } } ? true : nil
        }
        alice.close()
        let (again, _) = try await server.client("alice", device: "laptop")
        #expect(try await again.directs.sentStatus([read.uid, delivered.uid]) == [.read, .delivered])
        try server.restart()
        let (afterRestart, _) = try await server.client("alice", device: "tablet")
        #expect(try await afterRestart.directs.sentStatus([read.uid, delivered.uid]) == [.read, .delivered])
        let history = try await afterRestart.messages.history(of: read.channelID)
        #expect(history.messages.map(\.sentStatus) == [.read, .delivered])
        #expect(try await afterRestart.directs.list().first?.lastSeq == 2)
    }

    @Test func directMessagesAndReceiptsGoThroughOfflineSync() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, aliceEvents) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        _ = try await waitFor("bob synced") { bobEvents.syncCompletions == 1 ? true : nil }
        bob.close()
        let m = try await alice.directs.send("while you were out", to: "bob")
        #expect(try await alice.directs.sentStatus([m.uid]) == [.sent])
        _ = try await waitFor("alice synced") { aliceEvents.syncCompletions == 1 ? true : nil }
        alice.close()
        let (bobLater, later) = try await server.client("bob")
        _ = try await waitFor("bob's sync") { later.syncCompletions == 1 ? true : nil }
        let shape = try #require(later.shapes.withLock { $0.first { $0.uid == m.uid } })
        #expect(shape.offline)
        // Bob's device acknowledged delivery on receipt (asynchronously: wait until the server
        // has it, asking from another device of alice's, whose sync cursor is its own).
        let (probe, _) = try await server.client("alice", device: "probe")
        let deadline = Date().addingTimeInterval(10)
        while try await probe.directs.sentStatus([m.uid]) != [.delivered] {
            guard Date() < deadline else { throw WaitTimeout(what: "delivered recorded") }
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        probe.close()
        // Then bob reads the conversation; alice's first device was offline for both.
        try await bobLater.directs.ackConversationRead(m.channelID)
        let (_, aliceLater) = try await server.client("alice")
        _ = try await waitFor("alice's sync") { aliceLater.syncCompletions == 1 ? true : nil }
        let order = aliceLater.events.withLock { $0 }
        let done = order.firstIndex { if case .syncCompleted = $0 { true } else { false } }!
        let delivered = order.firstIndex { if case .delivered(let uids, _, _) = $0 { uids == [m.uid] } else { false } }
        let read = order.firstIndex { if case .conversationRead = $0 { true } else { false } }
        #expect(delivered != nil && delivered! < done, "delivered arrives in alice's sync")
        #expect(read != nil && read! < done, "read arrives in alice's sync")
    }

    @Test func badInputGetsAClearErrorAndChangesNothing() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (carol, _) = try await server.client("carol")
        let m = try await alice.directs.send("hello", to: "bob")
        await expectError(.badRequest) { _ = try await alice.directs.send("", to: "bob") }
        await expectError(.badRequest) { _ = try await alice.directs.send("hi", to: String(repeating: "x", count: 200)) }
        await expectError(.limitReached) { _ = try await alice.directs.sentStatus(Array(1...101)) }
        await expectError(.limitReached) { _ = try await alice.receipts.info(Array(1...101)) }
        await expectError(.limitReached) { _ = try await alice.receipts.respond(channel: 1, Array(1...101)) }
        await expectError(.notFound) { _ = try await carol.directs.sendReadReceipt(conversation: m.channelID) }
        await expectError(.notFound) { _ = try await carol.directs.ackConversationRead(m.channelID) }
        await expectError(.notFound) { _ = try await alice.directs.sendReadReceipt(conversation: 424_242) }
        await expectError(.notFound) { try await carol.directs.ackMessageRead(m.uid) }
        var tooMany = GHMarkDelivered()
        tooMany.messageUids = Array(1...101)
        await expectError(.limitReached) { _ = try await carol.call(.markDelivered(tooMany)) }
        #expect(try await alice.directs.sentStatus([m.uid]) == [.sent], "nothing above changed the message")
        #expect(try await alice.directs.list().map(\.peerID) == ["bob"])
    }
}
