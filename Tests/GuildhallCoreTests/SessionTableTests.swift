// The session table against Swift's Dictionary: the same answers after any
// sequence of inserts, replacements and removals, including runs that wrap
// around the table's end and removals inside long probe runs.

import Testing
@testable import GuildhallCore

@Suite struct SessionTableTests {
    @Test func answersLikeADictionaryThroughRandomInsertsAndRemovals() {
        var table = SessionTable<Int>()
        var reference: [UInt64: Int] = [:]
        var rng = SystemRandomNumberGenerator()
        // Keys as gateways make them (counter << 8 | loop), from a small range so that removals hit often.
        for step in 0..<200_000 {
            let key = (UInt64.random(in: 1...3_000, using: &rng) << 8) | UInt64.random(in: 0...3, using: &rng)
            if Bool.random(using: &rng) || reference.count < 100 {
                table[key] = step
                reference[key] = step
            } else {
                table[key] = nil
                reference[key] = nil
            }
            if step % 10_000 == 0 {
                #expect(table.count == reference.count)
                for (k, v) in reference { #expect(table[k] == v) }
            }
        }
        #expect(table.count == reference.count)
        for (k, v) in reference { #expect(table[k] == v) }
        for k in 1...3_000 { let key = UInt64(k) << 8 | 2; #expect(table[key] == reference[key]) }
    }

    @Test func removingEveryKeyLeavesItEmptyAndUsableAgain() {
        var table = SessionTable<String>()
        let keys = (1...5_000).map { UInt64($0) << 8 | 1 }
        for k in keys { table[k] = "\(k)" }
        #expect(table.count == keys.count)
        for k in keys.shuffled() { table[k] = nil }
        #expect(table.count == 0)
        for k in keys { #expect(table[k] == nil) }
        table[keys[7]] = "again"
        #expect(table[keys[7]] == "again" && table.count == 1)
    }
}
