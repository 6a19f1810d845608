// Pins (docs/features.md "Pins") through the SDK: pin, list the last pinned
// first, the notification, the bit, the per-channel limit, removal
// unpinning, a restart, and bad input.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct PinTests {
    @Test func pinsAreListedLastFirstToldToMembersAndKeptAcrossARestart() async throws {
        let server = try TestServer { $0.pinsPerChannel = 2 }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        let first = try await bob.messages.send("first", to: c.channelID)
        let second = try await bob.messages.send("second", to: c.channelID)
        let third = try await bob.messages.send("third", to: c.channelID)
        try await alice.messages.pin(first.uid, in: c.channelID)
        let told = try await bobEvents.notification(.channelPinsChanged)
        #expect(told.messageUid == first.uid && told.pinned && told.channelID == c.channelID && told.actorID == "alice")
        server.clock.advance(ms: 5)
        try await alice.messages.pin(second.uid, in: c.channelID)
        let pins = try await bob.messages.pins(in: c.channelID)
        #expect(pins.map(\.message.uid) == [second.uid, first.uid] && pins[0].pinnedBy == "alice" && pins[0].message.body.text == "second")
        await expectError(.conflict) { try await alice.messages.pin(first.uid, in: c.channelID) }
        await expectError(.limitReached) { try await alice.messages.pin(third.uid, in: c.channelID) }
        // bob (no PIN_MESSAGES) may not pin or unpin.
        await expectError(.forbidden) { try await bob.messages.unpin(first.uid, in: c.channelID) }
        try await alice.messages.unpin(first.uid, in: c.channelID)
        await expectError(.notFound) { try await alice.messages.unpin(first.uid, in: c.channelID) }
        try await alice.messages.pin(third.uid, in: c.channelID)
        try server.restart()
        let (again, _) = try await server.client("bob", device: "after")
        #expect(try await again.messages.pins(in: c.channelID).map(\.message.uid).sorted() == [second.uid, third.uid])
        _ = g
    }

    @Test func aRemovedMessageLeavesThePinsAndBadPinsAreRefused() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, aliceEvents) = try await server.client("alice")
        let (g, c) = try await guild(server, owner: alice, members: [])
        let other = try await alice.channels.create(in: g.serverID, name: "other")
        let m = try await alice.messages.send("pinned then gone", to: c.channelID)
        try await alice.messages.pin(m.uid, in: c.channelID)
        _ = try await alice.messages.recall(m.uid, in: c.channelID)
        _ = try await waitFor("the unpin told") { aliceEvents.notifications.first { $0.kind == .channelPinsChanged && !$0.pinned } }
        #expect(try await alice.messages.pins(in: c.channelID).isEmpty)
        await expectError(.conflict) { try await alice.messages.pin(m.uid, in: c.channelID) }
        await expectError(.notFound) { try await alice.messages.pin(m.uid + 1_000_000, in: c.channelID) }
        let elsewhere = try await alice.messages.send("in other", to: other.channelID)
        await expectError(.notFound) { try await alice.messages.pin(elsewhere.uid, in: c.channelID) }
    }
}
