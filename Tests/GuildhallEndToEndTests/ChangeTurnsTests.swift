// Changes that take turns (ChangeTurns.swift), with no server: a slot's
// decisions run one at a time in arrival order, each once the one before
// settled; slots do not wait on each other; a settled slot with nothing
// waiting is free again.

import GuildhallCore
import Testing
@testable import GuildhallServer

@Suite struct ChangeTurnsTests {
    @Test func aSlotsDecisionsRunOneAtATimeInArrivalOrder() {
        let turns = ChangeTurns()
        var ran: [String] = []
        turns.run(.server(1)) { ran.append("a") }
        turns.run(.server(1)) { ran.append("b") }
        turns.run(.server(1)) { ran.append("c") }
        #expect(ran == ["a"])
        turns.done(.server(1))
        #expect(ran == ["a", "b"])
        turns.done(.server(1))
        #expect(ran == ["a", "b", "c"])
        turns.done(.server(1))
        // Free again: the next runs at once.
        turns.run(.server(1)) { ran.append("d") }
        #expect(ran == ["a", "b", "c", "d"])
    }

    @Test func slotsOfOtherThingsDoNotWaitOnEachOther() {
        let turns = ChangeTurns()
        var ran: [String] = []
        turns.run(.server(1)) { ran.append("server") }
        turns.run(.pins(1)) { ran.append("pins") }
        turns.run(.message(1)) { ran.append("message") }
        turns.run(.server(2)) { ran.append("other server") }
        #expect(ran == ["server", "pins", "message", "other server"])
    }

    @Test func aDecisionThatSettlesAtOnceLetsTheNextGoInTheSameTurn() {
        let turns = ChangeTurns()
        var ran: [Int] = []
        turns.run(.group(7)) { ran.append(1) }
        // Each waiting decision settles as it runs (a no-op answered by itself).
        turns.run(.group(7)) { ran.append(2); turns.done(.group(7)) }
        turns.run(.group(7)) { ran.append(3); turns.done(.group(7)) }
        turns.done(.group(7))
        #expect(ran == [1, 2, 3])
        turns.run(.group(7)) { ran.append(4) }
        #expect(ran == [1, 2, 3, 4])
    }
}
