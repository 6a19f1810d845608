// The PROXY protocol reader against the examples of HAProxy's specification
// (proxy-protocol.txt: the v1 lines of section 2.1, including the longest
// ones a sender may emit, and v2 headers built as section 2.2 lays them
// out), at every split point, and the trusted-proxies list.

import GuildhallLoop
import Testing

@Suite struct ProxyHeaderTests {
    static let v2Signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]

    /// A v2 header: version 2 with `command`, `family`, the body's length, the body.
    static func v2(command: UInt8 = 1, family: UInt8, body: [UInt8]) -> [UInt8] {
        v2Signature + [0x20 | command, family, UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
    }

    static let examples: [(String, [UInt8], ProxyHeader.Outcome)] = {
        let v1 = { (s: String) in Array(s.utf8) }
        let longestTCP6 = "PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n"
        let longestUnknown = "PROXY UNKNOWN ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n"
        let ipv4Body: [UInt8] = [192, 168, 0, 1, 192, 168, 0, 11, 0xDC, 0x04, 0x01, 0xBB]  // 56324 -> 443
        var ipv6Body = [UInt8](repeating: 0, count: 36)
        ipv6Body[0] = 0x20; ipv6Body[1] = 0x01; ipv6Body[2] = 0x0d; ipv6Body[3] = 0xb8; ipv6Body[15] = 1   // 2001:db8::1
        ipv6Body[32] = 0x1F; ipv6Body[33] = 0x90                                                      // port 8080
        let tlv: [UInt8] = [0x04, 0x00, 0x03, 0x61, 0x62, 0x63]  // PP2_TYPE_NOOP, 3 bytes
        return [
            ("the specification's TCP4 example", v1("PROXY TCP4 192.168.0.1 192.168.0.11 56324 443\r\n"), .header(source: "192.168.0.1:56324", length: 47)),
            ("the longest TCP4 line", v1("PROXY TCP4 255.255.255.255 255.255.255.255 65535 65535\r\n"), .header(source: "255.255.255.255:65535", length: 56)),
            ("the longest TCP6 line", v1(longestTCP6), .header(source: "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535", length: 104)),
            ("UNKNOWN alone", v1("PROXY UNKNOWN\r\n"), .header(source: nil, length: 15)),
            ("the longest UNKNOWN line (107 bytes)", v1(longestUnknown), .header(source: nil, length: 107)),
            ("TCP4 with an IPv6 address", v1("PROXY TCP4 ::1 ::1 1 2\r\n"), .invalid("a v1 header's addresses must be IPv4")),
            ("a port over 65535", v1("PROXY TCP4 1.2.3.4 5.6.7.8 65536 443\r\n"), .invalid("a v1 header's ports are 0-65535")),
            ("a missing port", v1("PROXY TCP4 1.2.3.4 5.6.7.8 443\r\n"), .invalid("a v1 TCP header has source, destination and both ports")),
            ("a bare LF", v1("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\r"), .invalid("a v1 header's line must end with CRLF")),
            ("UDP4", v1("PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n"), .invalid("a v1 header's protocol is TCP4, TCP6 or UNKNOWN")),
            ("a line with no end", v1("PROXY UNKNOWN " + String(repeating: "x", count: 100)), .invalid("a v1 header longer than 107 bytes")),
            ("v2 TCP over IPv4", v2(family: 0x11, body: ipv4Body), .header(source: "192.168.0.1:56324", length: 28)),
            ("v2 TCP over IPv4 with a TLV", v2(family: 0x11, body: ipv4Body + tlv), .header(source: "192.168.0.1:56324", length: 34)),
            ("v2 TCP over IPv6", v2(family: 0x21, body: ipv6Body), .header(source: "[2001:db8::1]:8080", length: 52)),
            ("v2 LOCAL (a health check)", v2(command: 0, family: 0x00, body: []), .header(source: nil, length: 16)),
            ("v2 UNSPEC", v2(family: 0x00, body: tlv), .header(source: nil, length: 22)),
            ("v2 version 1", [UInt8](v2Signature) + [0x11, 0x11, 0, 12] + ipv4Body, .invalid("a v2 header's version is 2")),
            ("v2 command 2", v2(command: 2, family: 0x11, body: ipv4Body), .invalid("a v2 header's command is LOCAL or PROXY")),
            ("v2 IPv4 with 8 bytes", v2(family: 0x11, body: Array(ipv4Body.prefix(8))), .invalid("a v2 IPv4 header carries 12 bytes of addresses")),
            ("v2 over UDP", v2(family: 0x12, body: ipv4Body), .invalid("a v2 header's family is unspecified, TCP over IPv4 or IPv6, or a Unix stream")),
            ("v2 too long", v2Signature + [0x21, 0x11, 0x10, 0x00], .invalid("a v2 header's addresses and TLVs are at most 2048 bytes here")),
            ("a Guildhall frame", [0, 0, 0, 5, 10, 3, 8, 1, 0], .absent),
            ("an HTTP request", Array("GET /ws HTTP/1.1\r\n".utf8), .absent),
            ("PROXY without its space", Array("PROXYTCP4".utf8), .absent),
        ]
    }()

    @Test(arguments: examples.indices)
    func eachExampleReadsTheSameWholeAndAtEverySplit(_ i: Int) {
        let (name, bytes, expected) = Self.examples[i]
        // What follows the header (the connection's own bytes) is not read.
        #expect(ProxyHeader.read(bytes + Array("GET / HTTP/1.1\r\n".utf8)) == expected, "\(name)")
        #expect(ProxyHeader.read(bytes) == expected, "\(name)")
        // Any prefix short of the decision asks for more, never guesses.
        if case .header(_, let length) = expected {
            for cut in 0..<length { #expect(ProxyHeader.read(bytes.prefix(cut)) == .needMore, "\(name) cut at \(cut)") }
        }
    }

    /// Both listeners' rule: a header counts from a trusted proxy only; a broken one is refused from anyone.
    @Test func theDecisionTrustsOnlyTrustedPeers() {
        let header = Array("PROXY TCP4 203.0.113.9 10.0.0.1 5000 7400\r\n".utf8), frame: [UInt8] = [0, 0, 0, 5]
        #expect(ProxyHeader.decide(header + frame, peer: "10.0.0.2:1", trusted: true) == .proceed(client: "203.0.113.9:5000", from: header.count))
        #expect(ProxyHeader.decide(header, peer: "10.0.0.2:1", trusted: false)
                == .refuse("a PROXY header from 10.0.0.2:1, which is not a trusted proxy (trusted-proxies)"))
        #expect(ProxyHeader.decide(frame, peer: "10.0.0.2:1", trusted: false) == .proceed(client: nil, from: 0))
        #expect(ProxyHeader.decide(Array("PROXY UDP4\r\n".utf8), peer: "x", trusted: true) == .refuse("PROXY header: a v1 header's protocol is TCP4, TCP6 or UNKNOWN"))
        #expect(ProxyHeader.decide(Array("PROX".utf8), peer: "x", trusted: false) == .needMore)
    }

    @Test func trustedProxiesMatchAddressesAndBlocks() throws {
        let trusted = try TrustedProxies("10.0.0.0/8, 192.168.1.5 fd00::/8,127.0.0.1/32")
        for peer in ["10.1.2.3:443", "10.255.255.255:1", "192.168.1.5:80", "[fd12::1]:9", "127.0.0.1:5", "[::ffff:10.0.0.1]:7", "10.9.9.9"] {
            #expect(trusted.trusts(peer), "\(peer)")
        }
        for peer in ["11.0.0.1:443", "192.168.1.6:80", "[fe80::1]:9", "127.0.0.2:5", "?", ""] { #expect(!trusted.trusts(peer), "\(peer)") }
        #expect(!(try TrustedProxies("")).trusts("127.0.0.1:1"))
        for bad in ["10.0.0.0/33", "fd00::/129", "not-an-address", "10.0.0.0/x"] {
            #expect(throws: TrustedProxiesError.self) { _ = try TrustedProxies(bad) }
        }
        // X-Forwarded-For: from the right, the first address that is not a trusted proxy.
        #expect(trusted.client(forwardedFor: "203.0.113.7") == "203.0.113.7")
        #expect(trusted.client(forwardedFor: "198.51.100.1, 203.0.113.7, 10.0.0.2") == "203.0.113.7")
        #expect(trusted.client(forwardedFor: "10.0.0.3, 10.0.0.2") == nil)
        #expect(trusted.client(forwardedFor: "203.0.113.7, garbage") == nil)
        #expect(trusted.client(forwardedFor: "2001:db8::7") == "2001:db8::7")
    }
}
