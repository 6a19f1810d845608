// Message limits: body size, mentions, client id.

import Testing
@testable import GuildhallCore

@Suite struct ValidationTests {
    func code(_ content: MessageContent, mentions: [String] = [], clientID: String = "") -> FailureCode? {
        do {
            try Validation.message(content: content, mentions: mentions, clientID: clientID, maxBodyBytes: 16, maxMentions: 2)
            return nil
        } catch { return error.code }
    }

    @Test func aBodyAtTheLimitPassesAndOneByteMoreDoesNot() {
        #expect(code(.text(String(repeating: "a", count: 16))) == nil)
        #expect(code(.text(String(repeating: "a", count: 17))) == .tooLarge)
        #expect(code(.custom(type: "img", data: [UInt8](repeating: 0, count: 13))) == nil)
        #expect(code(.custom(type: "img", data: [UInt8](repeating: 0, count: 14))) == .tooLarge)
    }

    @Test func emptyTextAndEmptyCustomTypeAreRefused() {
        #expect(code(.text("")) == .badRequest)
        #expect(code(.custom(type: "", data: [1])) == .badRequest)
    }

    @Test func tooManyMentionsAreRefused() {
        #expect(code(.text("hi"), mentions: ["a", "b"]) == nil)
        #expect(code(.text("hi"), mentions: ["a", "b", "c"]) == .tooLarge)
        #expect(code(.text("hi"), mentions: [""]) == .badRequest)
    }

    @Test func anOverlongClientIDIsRefused() {
        #expect(code(.text("hi"), clientID: String(repeating: "c", count: 129)) == .tooLarge)
    }
}
