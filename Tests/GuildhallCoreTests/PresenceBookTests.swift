// Presence follows the table in Presence.swift: derived from the sessions,
// overridden by the choice, invisible looks offline, and each change is told once.

import Testing
@testable import GuildhallCore

@Suite struct PresenceBookTests {
    @Test func aUserIsOnlineWhileASessionIsAndOfflineWithTheTimeAfter() {
        var b = PresenceBook()
        b.opened("alice", session: 1)
        let online = b.settle("alice", now: 10)
        let again = b.settle("alice", now: 11)
        b.opened("alice", session: 2)
        b.closed("alice", session: 1)
        let stillOnline = b.settle("alice", now: 12)
        b.closed("alice", session: 2)
        let offline = b.settle("alice", now: 13)
        #expect(online == ShownPresence(user: "alice", status: .online, text: "", lastSeen: 0))
        #expect(again == nil && stillOnline == nil)
        #expect(offline == ShownPresence(user: "alice", status: .offline, text: "", lastSeen: 13))
        #expect(b.presence(of: "alice").lastSeen == 13 && b.presence(of: "nobody").lastSeen == 0)
    }

    @Test func idleWhenEverySessionIsIdle() {
        var b = PresenceBook()
        b.opened("alice", session: 1)
        b.opened("alice", session: 2)
        _ = b.settle("alice", now: 1)
        b.setIdle("alice", session: 1, true)
        let oneIdle = b.settle("alice", now: 2)
        b.setIdle("alice", session: 2, true)
        let bothIdle = b.settle("alice", now: 3)
        b.setIdle("alice", session: 1, false)
        let back = b.settle("alice", now: 4)
        let unknown = b.setIdle("alice", session: 9, true)
        #expect(oneIdle == nil && bothIdle?.status == .idle && back?.status == .online && !unknown)
    }

    @Test func theChoiceOverridesAndInvisibleLooksOfflineWithAFrozenLastSeen() {
        var b = PresenceBook()
        b.opened("alice", session: 1)
        _ = b.settle("alice", now: 1)
        b.choose("alice", PresenceChoice(status: .doNotDisturb, text: "focus"))
        let dnd = b.settle("alice", now: 2)
        b.choose("alice", PresenceChoice(status: .invisible, text: "hidden"))
        let invisible = b.settle("alice", now: 3)
        b.closed("alice", session: 1)
        let loggedOut = b.settle("alice", now: 4)
        b.opened("alice", session: 2)
        let backInvisible = b.settle("alice", now: 5)
        #expect(dnd == ShownPresence(user: "alice", status: .doNotDisturb, text: "focus", lastSeen: 0))
        #expect(invisible == ShownPresence(user: "alice", status: .offline, text: "", lastSeen: 3))
        #expect(loggedOut == nil && backInvisible == nil && b.presence(of: "alice").lastSeen == 3)
    }

    @Test func theDefaultChoiceIsNotKeptAndLoadedChoicesApply() {
        var b = PresenceBook()
        b.choose("alice", PresenceChoice(status: .idle))
        b.choose("alice", PresenceChoice())
        b.load("bob", PresenceChoice(status: .idle, text: "away"), lastSeen: 7)
        b.opened("bob", session: 1)
        #expect(b.choices["alice"] == nil && b.presence(of: "bob").status == .idle && b.presence(of: "bob").text == "away")
        #expect(PresenceChoice(status: .offline).problem != nil && PresenceChoice(text: String(repeating: "x", count: 129)).problem != nil)
        #expect(PresenceChoice(status: .invisible, text: String(repeating: "x", count: 128)).problem == nil)
    }
    /// A user taken over from another home shows as that home told: a session
    /// logging in again changes nothing others see; none makes them offline.
    @Test func aUserTakenOverKeepsWhatOthersWereToldUntilTheirSessionsSayOtherwise() {
        var b = PresenceBook()
        let told = ShownPresence(user: "alice", status: .doNotDisturb, text: "focus", lastSeen: 0)
        b.load("alice", PresenceChoice(status: .doNotDisturb, text: "focus"), lastSeen: 0)
        b.takeOver("alice", told: told)
        b.takeOver("bob", told: ShownPresence(user: "bob", status: .online, text: "", lastSeen: 0))
        b.takeOver("carol", told: ShownPresence(user: "carol", status: .offline, text: "", lastSeen: 5))
        b.opened("alice", session: 1)
        let aliceBack = b.settle("alice", now: 10)
        let bobGone = b.settle("bob", now: 11)
        #expect(aliceBack == nil && b.told("alice") == told && b.shownOnline == [told])
        #expect(bobGone == ShownPresence(user: "bob", status: .offline, text: "", lastSeen: 11))
        #expect(b.told("carol") == nil && b.settle("carol", now: 12) == nil)
    }

    /// Another home's word that the user's last session ended sets the last-seen
    /// time only while the user is offline here and it is later than what is known.
    @Test func aLeaveSeenElsewhereSetsTheLastSeenOnlyOfAnOfflineUser() {
        var b = PresenceBook()
        b.load("alice", PresenceChoice(), lastSeen: 20)
        b.opened("bob", session: 1)
        let earlier = b.sawLeave("alice", at: 10)
        let later = b.sawLeave("alice", at: 30)
        let online = b.sawLeave("bob", at: 40)
        let never = b.sawLeave("carol", at: 50)
        #expect(!earlier && later && !online && never)
        #expect(b.presence(of: "alice").lastSeen == 30 && b.presence(of: "carol").lastSeen == 50 && b.presence(of: "bob").status == .online)
    }
    /// Users whose home moved away are forgotten whole: coming back, they start from what is loaded.
    @Test func forgottenUsersKeepNothing() {
        var b = PresenceBook()
        b.opened("alice", session: 1)
        _ = b.settle("alice", now: 1)
        b.choose("alice", PresenceChoice(status: .doNotDisturb))
        b.opened("bob", session: 2)
        _ = b.settle("bob", now: 1)
        b.forget { $0 == "alice" }
        #expect(b.presence(of: "alice") == ShownPresence(user: "alice", status: .offline, text: "", lastSeen: 0))
        #expect(b.told("alice") == nil && b.settle("alice", now: 2) == nil && b.choice(of: "alice") == PresenceChoice())
        #expect(b.presence(of: "bob").status == .online && b.told("bob") != nil)
    }
}
