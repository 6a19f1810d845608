// Presence (docs/features.md "Presence") through the SDK: watching a user,
// the small-server exemption, direct peers, the choice and its storage,
// idle by the client and by the timer, invisible, and bad input.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct PresenceTests {
    @Test func aWatcherHearsAUserComeGoIdleChooseAndLeaveWithTheLastSeenTime() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (bob, bobEvents) = try await server.client("bob")
        let results = try await bob.people.watchPresence(["alice"])
        #expect(results.map(\.status) == [.targetOk])
        let never = try await bobEvents.presence(of: "alice") { _ in true }
        #expect(never.status == .presenceOffline && never.lastSeen == 0, "a user nobody has seen is offline, never seen")

        let (alice, _) = try await server.client("alice")
        _ = try await bobEvents.presence(of: "alice") { $0.status == .presenceOnline }
        try await alice.people.setIdle(true)
        _ = try await bobEvents.presence(of: "alice") { $0.status == .presenceIdle }
        try await alice.people.setIdle(false)
        _ = try await bobEvents.presence(of: "alice") { $0.status == .presenceOnline }
        let answer = try await alice.people.setPresence(.presenceDoNotDisturb, text: "focus time")
        #expect(answer.status == .presenceDoNotDisturb && answer.customText == "focus time")
        _ = try await bobEvents.presence(of: "alice") { $0.status == .presenceDoNotDisturb && $0.customText == "focus time" }
        alice.close()
        let gone = try await bobEvents.presence(of: "alice") { $0.status == .presenceOffline }
        #expect(gone.lastSeen > 0 && gone.customText.isEmpty)

        try await bob.people.watchPresence(["alice"], .unsubscribe)
        let heard = bobEvents.presenceFrames.count
        let (again, _) = try await server.client("alice", device: "d2")
        _ = try await again.servers.mine()
        let (carol, carolEvents) = try await server.client("carol")
        try await carol.people.watchPresence(["alice"])
        _ = try await carolEvents.presence(of: "alice") { $0.status == .presenceDoNotDisturb }
        #expect(bobEvents.presenceFrames.count == heard, "an unwatched user is not heard")
    }

    @Test func invisibleLooksExactlyLikeOfflineToOthers() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        try await bob.people.watchPresence(["alice"])
        _ = try await bobEvents.presence(of: "alice") { $0.status == .presenceOnline }
        let answer = try await alice.people.setPresence(.presenceInvisible, text: "hidden")
        #expect(answer.status == .presenceOffline && answer.customText.isEmpty && answer.lastSeen > 0)
        let seen = try await bobEvents.presence(of: "alice") { $0.status == .presenceOffline }
        #expect(seen == answer)
        // A watcher that comes later sees the same as one who saw her leave.
        let (carol, carolEvents) = try await server.client("carol")
        try await carol.people.watchPresence(["alice"])
        let later = try await carolEvents.presence(of: "alice") { _ in true }
        #expect(later == answer)
        try await alice.people.setPresence(.presenceOnline)
        _ = try await bobEvents.presence(of: "alice") { $0.status == .presenceOnline }
    }

    @Test func membersOfASmallServerHearEachOtherWithoutWatching() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (dave, daveEvents) = try await server.client("dave")
        let g = try await alice.servers.create(name: "G")
        _ = try await bob.servers.join(g.serverID)
        // bob heard alice when he joined; alice's next change reaches him too.
        _ = try await bobEvents.presence(of: "alice") { $0.status == .presenceOnline }
        try await alice.people.setPresence(.presenceIdle, text: "lunch")
        _ = try await bobEvents.presence(of: "alice") { $0.status == .presenceIdle && $0.customText == "lunch" }
        // A member who logs in later hears who is online at once.
        let (carol, _) = try await server.client("carol")
        _ = try await carol.servers.join(g.serverID)
        carol.close()
        let (carolAgain, carolEvents) = try await server.client("carol", device: "d2")
        _ = try await carolEvents.presence(of: "alice") { $0.status == .presenceIdle }
        _ = try await carolEvents.presence(of: "bob") { $0.status == .presenceOnline }
        _ = try await bobEvents.presence(of: "carol") { $0.status == .presenceOnline }
        carolAgain.close()
        _ = try await bobEvents.presence(of: "carol") { $0.status == .presenceOffline }
        // dave shares no server and watches nobody: he hears no one's.
        _ = try await dave.servers.mine()
        #expect(daveEvents.presenceFrames.joined().allSatisfy { $0.userID == "dave" })
    }

    @Test func peersOfADirectConversationHearEachOther() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        _ = try await alice.directs.open(with: "bob")
        _ = try await alice.directs.send("hi", to: "bob")
        bob.close()
        let (bobAgain, bobEvents) = try await server.client("bob", device: "d2")
        _ = try await bobEvents.presence(of: "alice") { $0.status == .presenceOnline }
        try await alice.people.setPresence(.presenceDoNotDisturb)
        _ = try await bobEvents.presence(of: "alice") { $0.status == .presenceDoNotDisturb }
        _ = bobAgain
    }

    @Test func theChoiceAndTheLastSeenTimeSurviveARestart() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        try await alice.people.setPresence(.presenceDoNotDisturb, text: "away for a week")
        let (carol, _) = try await server.client("carol")
        _ = carol
        let (bob, bobEvents) = try await server.client("bob")
        try await bob.people.watchPresence(["carol"])
        _ = try await bobEvents.presence(of: "carol") { $0.status == .presenceOnline }
        carol.close()
        let left = try await bobEvents.presence(of: "carol") { $0.status == .presenceOffline }
        try server.restart()
        let (watcher, watcherEvents) = try await server.client("bob", device: "after")
        try await watcher.people.watchPresence(["alice", "carol"])
        let carolAfter = try await watcherEvents.presence(of: "carol") { _ in true }
        #expect(carolAfter.lastSeen == left.lastSeen)
        _ = try await server.client("alice", device: "after")
        _ = try await watcherEvents.presence(of: "alice") { $0.status == .presenceDoNotDisturb && $0.customText == "away for a week" }
    }

    @Test func aSessionWithoutRequestsBecomesIdleAndItsNextRequestMakesItActive() async throws {
        let server = try TestServer { $0.presenceIdleSeconds = 2 }
        defer { server.stop() }
        let (bob, bobEvents) = try await server.client("bob")
        try await bob.people.watchPresence(["alice"])
        let (alice, _) = try await server.client("alice")
        _ = try await bobEvents.presence(of: "alice") { $0.status == .presenceIdle }
        let framesWhenIdle = bobEvents.presenceFrames.count
        _ = try await alice.servers.mine()
        // Active again; it goes idle again two seconds later, and frames are a second apart at most, so the online one is heard.
        _ = try await waitFor("alice active again") {
            bobEvents.presenceFrames.dropFirst(framesWhenIdle).joined().first { $0.userID == "alice" && $0.status == .presenceOnline }
        }
    }

    @Test func badPresenceRequestsAreRefusedAndChangeNothing() async throws {
        let server = try TestServer { $0.limitUserPresence = 2 }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        try await bob.people.watchPresence(["alice"])
        await expectError(.badRequest) { try await alice.people.setPresence(.presenceOffline) }
        await expectError(.badRequest) { try await alice.people.setPresence(.presenceIdle, text: String(repeating: "x", count: 129)) }
        try await alice.people.setPresence(.presenceOnline, text: String(repeating: "y", count: 128))
        let p = try await bobEvents.presence(of: "alice") { $0.customText.count == 128 }
        #expect(p.status == .presenceOnline)
        let results = try await bob.people.watchPresence(["carol", "", "dave", "erin"])
        #expect(results.map(\.status) == [.targetOk, .targetNotFound, .targetLimitReached, .targetLimitReached])
        // A second session of the same user counts against the same limit.
        let (bob2, _) = try await server.client("bob", device: "d2")
        #expect(try await bob2.people.watchPresence(["frank"]).map(\.status) == [.targetLimitReached])
        #expect(try await bob2.people.watchPresence(["carol"]).map(\.status) == [.targetOk])
    }
}
