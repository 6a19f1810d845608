// FewByKey keeps values by key like a dictionary whether it holds one entry
// (inline) or several, through insertions, replacements and removals in any
// order, checked against a dictionary doing the same.

import Testing
import GuildhallCore

struct FewByKeyTests {
    @Test func behavesLikeADictionaryThroughAnyMixOfChanges() {
        var few = FewByKey<String>()
        var model: [UInt64: String] = [:]
        #expect(few.isEmpty && few.count == 0 && Array(few).isEmpty)
        var seed: UInt64 = 7
        for step in 0..<2000 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            let key = (seed >> 33) % 6 + 1
            let value: String? = (seed >> 20) % 3 == 0 ? nil : "v\(step)"
            few[key] = value
            model[key] = value
            #expect(few.count == model.count && few.isEmpty == model.isEmpty)
            for k in UInt64(0)...7 { #expect(few[k] == model[k]) }
            #expect(Dictionary(uniqueKeysWithValues: few.map { ($0.key, $0.value) }) == model)
            #expect(Set(few.keys) == Set(model.keys) && few.values.sorted() == model.values.sorted())
        }
    }

    @Test func removingTheFirstKeepsTheRest() {
        var few = FewByKey<Int>()
        few[10] = 1
        few[20] = 2
        few[30] = 3
        few[10] = nil
        #expect(few.count == 2 && few[20] == 2 && few[30] == 3 && few[10] == nil)
        few[20] = nil
        few[30] = nil
        #expect(few.isEmpty && Array(few).isEmpty)
        few[40] = 4
        #expect(Array(few.keys) == [40])
    }

    @Test func idsAreASetOfKeys() {
        var ids = FewIDs()
        ids.insert(5)
        ids.insert(5)
        ids.insert(9)
        #expect(ids.count == 2 && Set(ids.keys) == [5, 9])
        ids.remove(5)
        ids.remove(7)
        #expect(Array(ids.keys) == [9])
        ids.remove(9)
        #expect(ids.isEmpty)
    }
}
