// The runner's window of tickets waiting on the writer (TicketWindow.swift),
// with no server: values come back by ticket in any order, gaps (a read's
// ticket) hold nothing, the window empties and starts again, and a ticket
// left waiting keeps its value while thousands settle after it.

import Testing
@testable import GuildhallServer

@Suite struct TicketWindowTests {
    @Test func valuesComeBackByTicketInAnyOrderOnce() {
        var w = TicketWindow<String>()
        w.insert("a", at: 1)
        w.insert("b", at: 2)
        w.insert("d", at: 4)  // 3 was a read's ticket
        #expect(w.count == 3)
        #expect(w.remove(at: 3) == nil)
        #expect(w.remove(at: 2) == "b")
        #expect(w.remove(at: 2) == nil)
        #expect(w.remove(at: 4) == "d")
        #expect(w.remove(at: 1) == "a")
        #expect(w.count == 0)
        #expect(w.remove(at: 0) == nil)
        #expect(w.remove(at: 99) == nil)
        // Empty: the window starts again wherever the next ticket is.
        w.insert("e", at: 1000)
        #expect(w.remove(at: 1000) == "e")
    }

    @Test func aTicketLeftWaitingKeepsItsValueWhileManySettleAfterIt() {
        var w = TicketWindow<UInt64>()
        w.insert(7, at: 7)
        for seq in UInt64(8)..<5000 {
            w.insert(seq, at: seq)
            #expect(w.remove(at: seq) == seq)
        }
        #expect(w.count == 1)
        #expect(w.remove(at: 7) == 7)
        #expect(w.count == 0)
    }

    @Test func settlingInOrderCutsTheWindowAndKeepsTheRest() {
        var w = TicketWindow<UInt64>()
        for seq in UInt64(1)...1000 { w.insert(seq * 10, at: seq) }
        for seq in UInt64(1)...600 { #expect(w.remove(at: seq) == seq * 10) }
        #expect(w.count == 400)
        for seq in UInt64(601)...1000 { #expect(w.remove(at: seq) == seq * 10) }
        #expect(w.count == 0)
    }
}
