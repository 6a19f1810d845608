// Which peers may say whose connection they carry (a PROXY header, an
// X-Forwarded-For header): the `trusted-proxies` setting, a list of
// addresses and CIDR blocks. IPv4 and IPv6, an IPv4-mapped IPv6 peer counted
// as its IPv4 address. Pure.

import Glibc

/// An IP address as its bytes (4 or 16).
public struct IPAddress: Equatable, Sendable {
    public enum Family: Sendable { case v4, v6 }
    public let bytes: [UInt8]
    public var family: Family { bytes.count == 4 ? .v4 : .v6 }

    /// From its text ("10.1.2.3", "fd00::1", "[fd00::1]"); nil for anything else.
    public init?(_ text: some StringProtocol) {
        var s = String(text)
        if s.hasPrefix("["), s.hasSuffix("]") { s = String(s.dropFirst().dropLast()) }
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, s, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, s, &v6) == 1 {
            let all = withUnsafeBytes(of: &v6) { Array($0) }
            // ::ffff:a.b.c.d is the IPv4 peer a dual-stack listener sees.
            bytes = all.prefix(12) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] ? Array(all.suffix(4)) : all
        } else {
            return nil
        }
    }

    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// The address in its usual text.
    public var text: String {
        var out = [CChar](repeating: 0, count: 64)
        var copy = bytes
        _ = inet_ntop(family == .v4 ? AF_INET : AF_INET6, &copy, &out, socklen_t(out.count))
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// "host:port" as connections name their peers ("[host]:port" for IPv6).
    public func withPort(_ port: Int) -> String { family == .v4 ? "\(text):\(port)" : "[\(text)]:\(port)" }
}

public struct TrustedProxies: Sendable {
    private let blocks: [(address: [UInt8], prefix: Int)]

    /// From the setting's text: addresses or CIDR blocks separated by commas (or spaces).
    public init(_ text: String) throws(TrustedProxiesError) {
        var blocks: [(address: [UInt8], prefix: Int)] = []
        for item in text.split(whereSeparator: { $0 == "," || $0 == " " }) where !item.isEmpty {
            let parts = item.split(separator: "/", maxSplits: 1)
            guard let address = IPAddress(parts[0]) else { throw TrustedProxiesError(item: String(item)) }
            let bits = address.bytes.count * 8
            let prefix = parts.count == 2 ? Int(parts[1]) : bits
            guard let prefix, (0...bits).contains(prefix) else { throw TrustedProxiesError(item: String(item)) }
            blocks.append((address.bytes, prefix))
        }
        self.blocks = blocks
    }

    /// Nobody is trusted.
    public static let none = TrustedProxies(blocks: [])
    private init(blocks: [(address: [UInt8], prefix: Int)]) { self.blocks = blocks }

    public var isEmpty: Bool { blocks.isEmpty }

    /// Whether `peer` ("host:port", "[host]:port" or a bare address) is one of the trusted proxies.
    public func trusts(_ peer: some StringProtocol) -> Bool {
        guard !blocks.isEmpty, let address = IPAddress(Self.host(of: peer)) else { return false }
        return blocks.contains { block in
            guard block.address.count == address.bytes.count else { return false }
            var left = block.prefix
            for (a, b) in zip(block.address, address.bytes) {
                guard left > 0 else { return true }
                let mask: UInt8 = left >= 8 ? 0xFF : ~(0xFF >> UInt8(left))
                if a & mask != b & mask { return false }
                left -= 8
            }
            return true
        }
    }

    /// The client an X-Forwarded-For list names, as seen through trusted
    /// proxies: from the right, the first address that is not a trusted
    /// proxy (each proxy appends the address it heard from). Nil when the
    /// list holds something that is not an address, or nothing but proxies.
    public func client(forwardedFor list: String) -> String? {
        for item in list.split(separator: ",").reversed() {
            let text = item.trimmingCharacters(in: .whitespaces)
            guard let address = IPAddress(text) else { return nil }
            if !trusts(text) { return address.text }
        }
        return nil
    }

    /// The host of "host:port" or "[v6]:port"; a bare address as it is.
    static func host(of peer: some StringProtocol) -> String {
        let s = String(peer)
        if s.hasPrefix("["), let close = s.firstIndex(of: "]") { return String(s[s.index(after: s.startIndex)..<close]) }
        if s.filter({ $0 == ":" }).count == 1, let colon = s.lastIndex(of: ":") { return String(s[..<colon]) }
        return s
    }
}

public struct TrustedProxiesError: Error, CustomStringConvertible, Sendable {
    public let item: String
    public var description: String { "trusted-proxies: \"\(item)\" is not an IP address or a CIDR block (10.0.0.0/8, fd00::/8)" }
}
