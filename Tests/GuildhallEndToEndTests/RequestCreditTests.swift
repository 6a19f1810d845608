// A session's credit for requests waiting on homes of other loops
// (RequestCredit.swift): out of credit at the count or the bytes, back in
// under half of both, answers taking back the average size. Values only.

import Testing
@testable import GuildhallServer

/// Runs a mutating step outside `#expect`, which cannot mutate.
private func take(_ credit: inout RequestCredit, _ step: (inout RequestCredit) -> Bool) -> Bool { step(&credit) }

@Suite struct RequestCreditTests {
    @Test func theCountRunsOutAtItsBoundAndComesBackUnderHalf() {
        var credit = RequestCredit()
        for _ in 1..<RequestCredit.maxRequests { #expect(!take(&credit) { $0.forwarded(bytes: 10) }) }
        #expect(take(&credit) { $0.forwarded(bytes: 10) })
        // Answered down to just over half: still out.
        for _ in 0..<(RequestCredit.maxRequests / 2 - 1) { #expect(!take(&credit) { $0.answered() }) }
        #expect(credit.requests == RequestCredit.maxRequests / 2 + 1)
        #expect(take(&credit) { $0.answered() })
    }

    @Test func bytesRunOutBeforeTheCountAndAnswersTakeBackTheAverage() {
        var credit = RequestCredit()
        #expect(!take(&credit) { $0.forwarded(bytes: RequestCredit.maxBytes / 4) })
        #expect(!take(&credit) { $0.forwarded(bytes: RequestCredit.maxBytes / 4) })
        #expect(take(&credit) { $0.forwarded(bytes: RequestCredit.maxBytes / 2) })
        #expect(credit.requests == 3 && credit.bytes == RequestCredit.maxBytes)
        // Each answer takes back a third of what is in flight (the average), whichever request it was.
        #expect(!take(&credit) { $0.answered() })
        #expect(credit.bytes == RequestCredit.maxBytes - RequestCredit.maxBytes / 3)
        #expect(take(&credit) { $0.answered() })
        #expect(take(&credit) { $0.answered() })
        #expect(credit.requests == 0 && credit.bytes == 0)
    }

    @Test func anAnswerWithNothingInFlightChangesNothing() {
        var credit = RequestCredit()
        #expect(take(&credit) { $0.answered() })
        #expect(credit.requests == 0 && credit.bytes == 0)
    }
}
