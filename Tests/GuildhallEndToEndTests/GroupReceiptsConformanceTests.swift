// Group read receipts on channel messages (docs/features.md), one test per rule,
// end to end through the SDK against the real server: requests at send and
// later, who may request, who hears of requests (live and in offline sync),
// responses by batch of one channel, only the requester hearing responses,
// reader pages, the settings, the response window on an injected clock, and
// survival across a restart.

import Foundation
import GuildhallClient
@testable import GuildhallServer
import GuildhallWire
import Testing

@Suite struct GroupReceiptsConformanceTests {
    /// alice owns a server where bob and carol are members; everyone's recorder attached.
    struct Trio {
        let server: TestServer
        let alice: GuildhallClient, aliceEvents: Recorder
        let bob: GuildhallClient, bobEvents: Recorder
        let carol: GuildhallClient, carolEvents: Recorder
        let channel: GHChannelInfo
    }

    func trio(_ tweak: (inout Settings) throws -> Void = { _ in }) async throws -> Trio {
        let server = try TestServer(tweak)
        let (alice, aliceEvents) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (carol, carolEvents) = try await server.client("carol")
        let (_, c) = try await guild(server, owner: alice, members: [bob, carol])
        return Trio(server: server, alice: alice, aliceEvents: aliceEvents, bob: bob, bobEvents: bobEvents, carol: carol,
                    carolEvents: carolEvents, channel: c)
    }

    @Test func needReceiptAtSendReachesTheOtherMembersAndOnlyTheRequesterHearsResponses() async throws {
        let t = try await trio()
        defer { t.server.stop() }
        let m = try await t.alice.messages.send("did you read this?", to: t.channel.channelID, needReceipt: true)
        #expect(m.receipt.requested)
        _ = try await waitFor("bob's receipt request") { t.bobEvents.receiptRequests.contains(m.uid) ? true : nil }
        _ = try await waitFor("carol's receipt request") { t.carolEvents.receiptRequests.contains(m.uid) ? true : nil }
        let responded = try await t.bob.receipts.respond(channel: t.channel.channelID, [m.uid])
        #expect(responded.first?.responded == true)
        let response = try await waitFor("alice hears bob") { t.aliceEvents.receiptResponses.first { $0.uid == m.uid } }
        #expect(response.reader == "bob" && response.time > 0)
        let group = try await waitFor("alice's group-read callback") {
            t.aliceEvents.events.withLock { $0.compactMap { if case .groupRead(let r) = $0 { r } else { nil } }.first }
        }
        #expect(group.readerCount == 1 && group.readers["bob"] == response.time)
        // carol responds too: alice hears her; bob and carol never hear responses.
        try await t.carol.receipts.respond(channel: t.channel.channelID, [m.uid])
        _ = try await waitFor("alice hears carol") { t.aliceEvents.receiptResponses.contains { $0.reader == "carol" } ? true : nil }
        #expect(t.bobEvents.receiptResponses.isEmpty && t.carolEvents.receiptResponses.isEmpty)
        #expect(t.aliceEvents.receiptRequests.isEmpty, "the requester is not asked")
        let info = try await t.alice.receipts.info([m.uid])[0]
        #expect(info.requested && info.readerCount == 2 && !info.responded && info.memberCount == 3)
    }

    @Test func onlyTheSenderMayRequestLaterAndASecondRequestIsANoOp() async throws {
        let t = try await trio()
        defer { t.server.stop() }
        let m = try await t.alice.messages.send("plain", to: t.channel.channelID)
        #expect(try await t.alice.receipts.info([m.uid])[0].requested == false)
        await expectError(.forbidden) { try await t.bob.receipts.request(m.uid) }
        let info = try await t.alice.receipts.request(m.uid)
        #expect(info.requested && info.readerCount == 0)
        _ = try await waitFor("bob's receipt request") { t.bobEvents.receiptRequests.contains(m.uid) ? true : nil }
        #expect(try await t.alice.receipts.request(m.uid).requested)
        // Once asked, still only the sender may ask; whoever may not see the message hears it does not exist.
        await expectError(.forbidden) { try await t.bob.receipts.request(m.uid) }
        let (stranger, _) = try await t.server.client("stan")
        await expectError(.notFound) { try await stranger.receipts.request(m.uid) }
        // A later request is the barrier: had the second request sent anything, it would have come first.
        let later = try await t.alice.messages.send("later", to: t.channel.channelID, needReceipt: true)
        _ = try await waitFor("the later request") { t.bobEvents.receiptRequests.contains(later.uid) ? true : nil }
        #expect(t.bobEvents.receiptRequests.filter { $0 == m.uid }.count == 1)
        await expectError(.notFound) { try await t.alice.receipts.request(987_654_321) }
    }

    @Test func aResponseCoversEarlierMessagesAndRespondingTwiceIsANoOp() async throws {
        let t = try await trio()
        defer { t.server.stop() }
        let first = try await t.alice.messages.send("one", to: t.channel.channelID, needReceipt: true)
        let second = try await t.alice.messages.send("two", to: t.channel.channelID, needReceipt: true)
        try await t.bob.receipts.respond(channel: t.channel.channelID, [second.uid])
        _ = try await waitFor("both responses") {
            Set(t.aliceEvents.receiptResponses.filter { $0.reader == "bob" }.map(\.uid)) == [first.uid, second.uid] ? true : nil
        }
        let again = try await t.bob.receipts.respond(channel: t.channel.channelID, [first.uid, second.uid])
        #expect(again.map(\.responded) == [true, true])
        try await t.carol.receipts.respond(channel: t.channel.channelID, [first.uid])
        _ = try await waitFor("carol's response (the barrier)") { t.aliceEvents.receiptResponses.contains { $0.reader == "carol" } ? true : nil }
        #expect(t.aliceEvents.receiptResponses.filter { $0.reader == "bob" }.count == 2, "bob's second response sent nothing")
        let infos = try await t.alice.receipts.info([first.uid, second.uid])
        #expect(infos.map(\.readerCount) == [2, 1])
    }

    @Test func aBatchMixingChannelsIsRejected() async throws {
        let t = try await trio()
        defer { t.server.stop() }
        let other = try await t.alice.channels.create(in: t.channel.serverID, name: "other")
        let a = try await t.alice.messages.send("here", to: t.channel.channelID, needReceipt: true)
        let b = try await t.alice.messages.send("there", to: other.channelID, needReceipt: true)
        await expectError(.badRequest) { try await t.bob.receipts.respond(channel: t.channel.channelID, [a.uid, b.uid]) }
        #expect(try await t.bob.receipts.info([a.uid, b.uid]).map(\.responded) == [false, false], "nothing of a rejected batch counts")
        await expectError(.notFound) { try await t.bob.receipts.respond(channel: t.channel.channelID, [a.uid, 123_456]) }
        await expectError(.limitReached) { try await t.bob.receipts.respond(channel: t.channel.channelID, []) }
    }

    @Test func guestsAndNonMembersCannotRespond() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (guest, _) = try await server.client("gus")
        let (stranger, _) = try await server.client("stan")
        let s = try await alice.servers.create(name: "Open house", allowGuests: true)
        let c = try await alice.channels.create(in: s.serverID, name: "lobby")
        let m = try await alice.messages.send("welcome", to: c.channelID, needReceipt: true)
        _ = try await guest.servers.enterAsGuest(s.serverID)
        await expectError(.forbidden) { try await guest.receipts.respond(channel: c.channelID, [m.uid]) }
        // A stranger cannot see the channel: answered as one that does not exist.
        await expectError(.notFound) { try await stranger.receipts.respond(channel: c.channelID, [m.uid]) }
        let info = try await alice.receipts.info([m.uid])[0]
        #expect(info.readerCount == 0)
    }

    @Test func readersPageNewestFirstWithTheTotalAndOnlyForTheRequester() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        var members: [GuildhallClient] = []
        for i in 0..<5 { members.append(try await server.client("m\(i)").0) }
        let (_, c) = try await guild(server, owner: alice, members: members)
        let m = try await alice.messages.send("roll call", to: c.channelID, needReceipt: true)
        for member in members {
            server.clock.advance(ms: 10)  // distinct read times
            try await member.receipts.respond(channel: c.channelID, [m.uid])
        }
        var seen: [GHReader] = []
        var cursor: UInt64 = 0
        repeat {
            let page = try await alice.receipts.readers(of: m.uid, cursor: cursor, limit: 2)
            #expect(page.total == 5 && page.readers.count <= 2)
            seen += page.readers
            cursor = page.nextCursor
        } while cursor != 0
        #expect(seen.map(\.userID) == ["m4", "m3", "m2", "m1", "m0"])
        #expect(seen.map(\.readTime) == seen.map(\.readTime).sorted(by: >))
        await expectError(.forbidden) { _ = try await members[0].receipts.readers(of: m.uid) }
        await expectError(.limitReached) { _ = try await alice.receipts.readers(of: m.uid, limit: 101) }
    }

    @Test func requestsAndResponsesReachOfflineDevicesThroughSync() async throws {
        let t = try await trio()
        defer { t.server.stop() }
        // bob was in step once, then went away; alice goes away too.
        _ = try await waitFor("bob synced") { t.bobEvents.syncCompletions == 1 ? true : nil }
        t.bob.close()
        let m = try await t.alice.messages.send("while bob is away", to: t.channel.channelID, needReceipt: true)
        _ = try await waitFor("alice synced") { t.aliceEvents.syncCompletions == 1 ? true : nil }
        t.alice.close()
        try await t.carol.receipts.respond(channel: t.channel.channelID, [m.uid])
        let (_, bobLater) = try await t.server.client("bob")
        _ = try await waitFor("bob's sync") { bobLater.syncCompletions == 1 ? true : nil }
        let bobOrder = bobLater.events.withLock { $0 }
        let request = bobOrder.firstIndex { if case .receiptRequest(_, let uid) = $0 { uid == m.uid } else { false } }
        let done = bobOrder.firstIndex { if case .syncCompleted = $0 { true } else { false } }!
        #expect(request != nil && request! < done, "the receipt request arrives in bob's sync")
        let (_, aliceLater) = try await t.server.client("alice")
        _ = try await waitFor("alice's sync") { aliceLater.syncCompletions == 1 ? true : nil }
        #expect(aliceLater.receiptResponses.contains { $0.uid == m.uid && $0.reader == "carol" }, "the response arrives in alice's sync")
    }

    @Test func requestsReachOnlyMembersWhoMayReadTheChannelAndTheyAreTheN() async throws {
        let t = try await trio()
        defer { t.server.stop() }
        let (dave, daveEvents) = try await t.server.client("dave")
        _ = try await dave.servers.join(t.channel.serverID)
        _ = try await waitFor("dave synced") { daveEvents.syncCompletions == 1 ? true : nil }
        dave.close()
        for hidden in ["carol", "dave"] {
            _ = try await t.alice.roles.setOverride(in: t.channel.serverID, channel: t.channel.channelID, user: hidden,
                                                    GHPermissionBits(deny: [.viewChannel]))
        }
        let m = try await t.alice.messages.send("for readers only", to: t.channel.channelID, needReceipt: true)
        _ = try await waitFor("bob's receipt request") { t.bobEvents.receiptRequests.contains(m.uid) ? true : nil }
        // A later request in a channel carol reads is the barrier for her live events.
        let open = try await t.alice.channels.create(in: t.channel.serverID, name: "open")
        let later = try await t.alice.messages.send("for everyone", to: open.channelID, needReceipt: true)
        _ = try await waitFor("carol's request in the open channel") { t.carolEvents.receiptRequests.contains(later.uid) ? true : nil }
        #expect(!t.carolEvents.receiptRequests.contains(m.uid), "carol may not read the channel: no request reaches her")
        let (_, daveLater) = try await t.server.client("dave")
        _ = try await waitFor("dave's sync") { daveLater.syncCompletions == 1 ? true : nil }
        #expect(daveLater.receiptRequests == [later.uid], "dave's sync holds the open channel's request only")
        #expect(try await t.alice.receipts.info([m.uid])[0].memberCount == 2, "N counts alice and bob, who may read the channel, not the server's 4")
    }

    @Test func receiptsOnlyInServersUpToTheMemberLimit() async throws {
        let t = try await trio { $0.receiptMaxMembers = 2 }
        defer { t.server.stop() }
        await expectError(.limitReached) { _ = try await t.alice.messages.send("too many of us", to: t.channel.channelID, needReceipt: true) }
        let m = try await t.alice.messages.send("plain", to: t.channel.channelID)
        await expectError(.limitReached) { try await t.alice.receipts.request(m.uid) }
        t.server.update { $0.receiptMaxMembers = 3 }
        #expect(try await t.alice.receipts.request(m.uid).requested)
    }

    @Test func whoMayRequestAndWhoSeesTheCountAreSettings() async throws {
        let t = try await trio { $0.receiptRequesters = "admins" }
        defer { t.server.stop() }
        await expectError(.forbidden) { _ = try await t.bob.messages.send("may I?", to: t.channel.channelID, needReceipt: true) }
        _ = try await t.alice.members.setRole(.admin, of: "bob", in: t.channel.serverID)
        let m = try await t.bob.messages.send("now I may", to: t.channel.channelID, needReceipt: true)
        try await t.carol.receipts.respond(channel: t.channel.channelID, [m.uid])
        // Sender only (the default): carol, not the sender, sees no count.
        var carolView = try await t.carol.receipts.info([m.uid])[0]
        #expect(carolView.countHidden && carolView.readerCount == 0 && carolView.responded)
        #expect(try await t.bob.receipts.info([m.uid])[0].readerCount == 1)
        t.server.update { $0.receiptCountVisibility = "all" }
        carolView = try await t.carol.receipts.info([m.uid])[0]
        #expect(!carolView.countHidden && carolView.readerCount == 1)
    }

    @Test func aMessageOlderThanTheWindowTakesNoMoreResponses() async throws {
        let t = try await trio()
        defer { t.server.stop() }
        let old = try await t.alice.messages.send("ancient", to: t.channel.channelID, needReceipt: true)
        let plain = try await t.alice.messages.send("ancient, no receipt", to: t.channel.channelID)
        t.server.clock.advance(ms: 3 * 86_400_000 + 1_000)
        let fresh = try await t.alice.messages.send("fresh", to: t.channel.channelID, needReceipt: true)
        let answer = try await t.bob.receipts.respond(channel: t.channel.channelID, [old.uid])
        #expect(answer[0].closed && !answer[0].responded)
        await expectError(.forbidden) { try await t.alice.receipts.request(plain.uid) }
        // A response to the fresh message moves bob's cursor past the old one without making him its reader.
        try await t.bob.receipts.respond(channel: t.channel.channelID, [fresh.uid])
        let infos = try await t.alice.receipts.info([old.uid, fresh.uid])
        #expect(infos.map(\.readerCount) == [0, 1])
        #expect(infos[0].closed && !infos[1].closed)
        #expect(try await t.alice.receipts.readers(of: old.uid).total == 0)
    }

    @Test func receiptsSurviveARestartAndMessagesCarryTheirInfo() async throws {
        let t = try await trio()
        defer { t.server.stop() }
        let m = try await t.alice.messages.send("remember me", to: t.channel.channelID, needReceipt: true)
        try await t.bob.receipts.respond(channel: t.channel.channelID, [m.uid])
        try t.server.restart()
        let (alice, _) = try await t.server.client("alice", device: "d2")
        let (carol, _) = try await t.server.client("carol", device: "d2")
        let info = try await alice.receipts.info([m.uid])[0]
        #expect(info.requested && info.readerCount == 1)
        #expect(try await alice.receipts.readers(of: m.uid).readers.map(\.userID) == ["bob"])
        let history = try await carol.messages.history(of: t.channel.channelID)
        let carried = try #require(history.messages.first { $0.uid == m.uid })
        #expect(carried.receipt.requested && !carried.receipt.responded && carried.receipt.countHidden)
        try await carol.receipts.respond(channel: t.channel.channelID, [m.uid])
        #expect(try await carol.messages.get([m.uid]).first?.receipt.responded == true)
        #expect(try await alice.receipts.info([m.uid])[0].readerCount == 2)
    }
}
