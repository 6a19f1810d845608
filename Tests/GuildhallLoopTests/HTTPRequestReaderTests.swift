// The HTTP request reader: the same requests at every split point, and
// its limits and malformed input answered with their status.

import Testing
@testable import GuildhallLoop

@Suite struct HTTPRequestReaderTests {
    static let two = Array(("PUT /settings?dry=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\nContent-Length: 12\r\n\r\n"
        + "{\"a\":\"b c\"}\n" + "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").utf8)

    func expected() -> [HTTPRequest] {
        [HTTPRequest(method: "PUT", target: "/settings?dry=1",
                     headers: [("Host", "x"), ("Authorization", "Bearer s3cret"), ("Content-Length", "12")], body: Array("{\"a\":\"b c\"}\n".utf8)),
         HTTPRequest(method: "GET", target: "/healthz", headers: [("Host", "x")], body: [])]
    }

    @Test func allAtOnceYieldsBothRequests() throws {
        let r = HTTPRequestReader(maxRequestBytes: 4096, maxHeaders: 16)
        let got = try r.feed(Self.two)
        #expect(got == expected())
        #expect(got[0].path == "/settings" && got[0].header("authorization") == "Bearer s3cret")
    }

    @Test func queryParametersAreFoundByNameAndPercentDecoded() {
        let r = HTTPRequest(method: "GET", target: "/cluster?guild=42&user=a%40b+c&empty=&bare", headers: [], body: [])
        #expect(r.path == "/cluster")
        #expect(r.query("guild") == "42" && r.query("user") == "a@b c")
        #expect(r.query("empty") == "" && r.query("bare") == "" && r.query("missing") == nil)
        #expect(HTTPRequest(method: "GET", target: "/cluster", headers: [], body: []).query("guild") == nil)
    }

    @Test(arguments: Array(1..<two.count))
    func anySplitPointYieldsTheSameRequests(split: Int) throws {
        let r = HTTPRequestReader(maxRequestBytes: 4096, maxHeaders: 16)
        let got = try r.feed(Array(Self.two[..<split])) + r.feed(Array(Self.two[split...]))
        #expect(got == expected())
    }

    @Test func oneByteAtATimeYieldsTheSameRequests() throws {
        let r = HTTPRequestReader(maxRequestBytes: 4096, maxHeaders: 16)
        var got: [HTTPRequest] = []
        for b in Self.two { got += try r.feed([b]) }
        #expect(got == expected())
    }

    @Test func aRequestOverTheSizeLimitIs413AndTheReaderStaysFailed() {
        let r = HTTPRequestReader(maxRequestBytes: 64, maxHeaders: 16)
        let big = Array("POST /backup HTTP/1.1\r\nContent-Length: 1000\r\n\r\n".utf8) + Array(repeating: UInt8(ascii: "x"), count: 100)
        #expect(throws: HTTPReadError.tooLarge(limit: 64)) { try r.feed(big) }
        #expect(throws: HTTPReadError.tooLarge(limit: 64)) { try r.feed(Array("GET / HTTP/1.1\r\n\r\n".utf8)) }
        #expect(HTTPReadError.tooLarge(limit: 64).status == 413)
    }

    @Test func tooManyHeadersIs431() {
        let r = HTTPRequestReader(maxRequestBytes: 4096, maxHeaders: 2)
        let many = Array("GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n".utf8)
        #expect(throws: HTTPReadError.tooManyHeaders(limit: 2)) { try r.feed(many) }
        #expect(HTTPReadError.tooManyHeaders(limit: 2).status == 431)
    }

    @Test func garbageIs400() {
        let r = HTTPRequestReader(maxRequestBytes: 4096, maxHeaders: 16)
        do {
            _ = try r.feed(Array("\u{16}\u{03}\u{01}\u{00} not http at all\r\n\r\n".utf8))
            Issue.record("garbage was read as a request")
        } catch {
            #expect(error.status == 400)
            if case .malformed(let name) = error { #expect(name.hasPrefix("HPE_")) } else { Issue.record("\(error)") }
        }
    }
}
