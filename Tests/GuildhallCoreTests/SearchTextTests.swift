// Search's text rules: CJK characters set apart for the index, queries as
// string literals that nothing a user types can break, snippets back as text.

import Testing
@testable import GuildhallCore

@Suite struct SearchTextTests {
    @Test func cjkCharactersAreSetApartAndEverythingElseIsKept() {
        #expect(SearchText.indexed("hello world") == "hello world")
        #expect(SearchText.indexed("你好") == "你\u{200B}好\u{200B}")
        #expect(SearchText.indexed("abc北京def") == "abc\u{200B}北\u{200B}京\u{200B}def")
        #expect(SearchText.indexed("ひらがなカナ한국") == "ひ\u{200B}ら\u{200B}が\u{200B}な\u{200B}カ\u{200B}ナ\u{200B}한\u{200B}국\u{200B}")
        #expect(SearchText.indexed("a\u{E000}b\u{E001}c") == "abc", "the snippet's markers cannot come from the text")
    }

    @Test func queriesAreWordsPhrasesAndPrefixesAsLiterals() throws {
        #expect(try SearchQuery("quick brown").expression == "\"quick\" \"brown\"")
        #expect(try SearchQuery("\"brown fox\" jump*").expression == "\"brown fox\" \"jump\"*")
        #expect(try SearchQuery("北京").expression == "\"北\u{200B}京\u{200B}\"")
        #expect(try SearchQuery("NEAR(a b) OR c:d").expression == "\"NEAR(a\" \"b)\" \"OR\" \"c:d\"")
        #expect(try SearchQuery("ca\"ts").expression == "\"ca\"\"ts\"", "a quote inside a word is doubled, part of the word")
        #expect(try SearchQuery("say \"hi").expression == "\"say\" \"hi\"", "an unclosed phrase runs to the end")
        #expect(try SearchQuery("x** !!! *").terms.map(\.text) == ["x"], "what holds no letter or digit is dropped")
        #expect(try SearchQuery("ab* abc* 北*").expression == "\"ab\" \"abc\"* \"北\u{200B}\"*", "a prefix of fewer than 3 letters is the word itself")
        #expect(try SearchQuery("a\"\"b").expression == "\"a\"\"\"\"b\"")
    }

    @Test func queriesWithoutWordsOrTooLongAreRefused() {
        for bad in ["", "   ", "!!! ???", "\"\"", String(repeating: "x", count: 257), (1...17).map { "w\($0)" }.joined(separator: " ")] {
            #expect(throws: Failure.self, "\(bad.prefix(20))") { _ = try SearchQuery(bad) }
        }
        #expect(throws: Never.self) { _ = try SearchQuery(String(repeating: "x", count: 256)) }
    }

    @Test func snippetsComeBackAsTextWithTheMatchesMarked() {
        let raw = "the \u{E000}北\u{200B}京\u{200B}\u{E001}烤\u{200B}鸭\u{200B} \u{E000}fox\u{E001}"
        let parts = SearchText.snippetParts(raw)
        #expect(parts.map(\.text) == ["the ", "北京", "烤鸭 ", "fox"])
        #expect(parts.map(\.match) == [false, true, false, true])
    }
}
