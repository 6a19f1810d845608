// "Direct messages only from server-mates" (docs/features.md "Blocking")
// through the SDK: a stranger's direct message, and a stranger putting the
// user into a group, are refused; server-mates get through, and anyone may
// answer what the user wrote to them; the choice is kept across a restart,
// and turning it off lets strangers in at once.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct DirectPrivacyTests {
    @Test func onlyServerMatesWriteToOneWhoAsksForItAndOthersMayAnswer() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, aliceHeard) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (eve, _) = try await server.client("eve")
        #expect(try await alice.directs.directMessagePrivacy() == false)
        #expect(try await alice.directs.setDirectMessagePrivacy(serverMatesOnly: true))
        _ = try await guild(server, owner: alice, members: [bob])

        // eve shares no server with alice: refused, and told why; bob does.
        await expectError(.forbidden) { _ = try await eve.directs.send("hi alice", to: "alice") }
        let fromBob = try await bob.directs.send("hi alice", to: "alice")
        _ = try await aliceHeard.message { $0.uid == fromBob.uid }
        #expect(try await alice.directs.list().count == 1, "eve's refused message opened nothing alice sees")

        // alice writes to eve first: eve may answer.
        _ = try await alice.directs.send("hello eve", to: "eve")
        let answer = try await eve.directs.send("hello back", to: "alice")
        _ = try await aliceHeard.message { $0.uid == answer.uid }

        // Groups: only a server-mate may put alice into one.
        await expectError(.forbidden) { _ = try await eve.directs.createGroup(named: "Strangers", with: ["alice", "carol"]) }
        let bobs = try await bob.directs.createGroup(named: "Mates", with: ["alice", "carol"])
        #expect(bobs.memberIds.contains("alice"))
        let eves = try await eve.directs.createGroup(named: "Eve's", with: ["bob", "carol"])
        await expectError(.forbidden) { _ = try await eve.directs.addToGroup(eves.conversationID, ["alice"]) }

        // Kept across a restart; turned off, strangers are let in at once (what was kept about alice is forgotten).
        try server.restart()
        let (again, _) = try await server.client("alice", device: "after")
        let (dan, _) = try await server.client("dan")
        let (eveAgain, _) = try await server.client("eve", device: "after")
        #expect(try await again.directs.directMessagePrivacy())
        await expectError(.forbidden) { _ = try await dan.directs.send("hi", to: "alice") }
        #expect(try await again.directs.setDirectMessagePrivacy(serverMatesOnly: false) == false)
        _ = try await dan.directs.send("hi now", to: "alice")
        _ = try await eveAgain.directs.addToGroup(eves.conversationID, ["alice"])
    }
}
