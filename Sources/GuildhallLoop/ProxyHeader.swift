// The PROXY protocol (HAProxy's, versions 1 and 2): the header a load
// balancer puts before a connection's own bytes to say whose connection it
// is. Sans-I/O: `read` looks at the first bytes of a connection and says
// whether more are needed, whether they are a header (and the client's
// address, and how many bytes it took), or something else. Which peers may
// send one is `TrustedProxies`; what to do with the answer is the caller's.
// Pure.

public enum ProxyHeader {
    public enum Outcome: Equatable, Sendable {
        /// Too few bytes to tell; call again with more.
        case needMore
        /// Not a PROXY header: the connection's own bytes start here.
        case absent
        /// A header of `length` bytes; `source` is the client's "host:port",
        /// nil when the header names none (v1 UNKNOWN, v2 LOCAL or an unspecified family).
        case header(source: String?, length: Int)
        /// A header that breaks the protocol, and why.
        case invalid(String)
    }

    /// The most bytes a v1 header takes (the protocol's own bound, with CRLF).
    public static let v1MaxLength = 107
    /// The most bytes of addresses and TLVs a v2 header may carry here.
    public static let v2MaxBody = 2048
    static let v1Prefix = Array("PROXY ".utf8)
    static let v2Signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]

    /// What a listener does with a connection's first bytes.
    public enum Decision: Equatable, Sendable {
        case needMore
        /// Go on from byte `from`; `client` is the address a trusted proxy named (nil: the peer's own).
        case proceed(client: String?, from: Int)
        /// Refuse the connection, and why.
        case refuse(String)
    }

    /// The rule both listeners follow: a header counts from a trusted proxy,
    /// is refused from anyone else, and a broken one is refused from anyone.
    public static func decide(_ bytes: some Collection<UInt8>, peer: String, trusted: Bool) -> Decision {
        switch read(bytes) {
        case .needMore: return .needMore
        case .absent: return .proceed(client: nil, from: 0)
        case .header(let client, let length):
            return trusted ? .proceed(client: client, from: length)
                           : .refuse("a PROXY header from \(peer), which is not a trusted proxy (trusted-proxies)")
        case .invalid(let why): return .refuse("PROXY header: \(why)")
        }
    }

    public static func read(_ bytes: some Collection<UInt8>) -> Outcome {
        let b = Array(bytes.prefix(16 + v2MaxBody))
        if b.isEmpty { return .needMore }
        if startsLike(b, v2Signature) { return b.count < v2Signature.count ? .needMore : readV2(b) }
        if startsLike(b, v1Prefix) { return b.count < v1Prefix.count ? .needMore : readV1(b) }
        return .absent
    }

    /// Whether `b` and `prefix` agree on their common length.
    private static func startsLike(_ b: [UInt8], _ prefix: [UInt8]) -> Bool {
        zip(b, prefix).allSatisfy { $0 == $1 }
    }

    // MARK: Version 1: "PROXY TCP4 1.2.3.4 5.6.7.8 1234 443\r\n"

    private static func readV1(_ b: [UInt8]) -> Outcome {
        guard let cr = b.prefix(v1MaxLength).firstIndex(of: 0x0D) else {
            return b.count >= v1MaxLength ? .invalid("a v1 header longer than \(v1MaxLength) bytes") : .needMore
        }
        guard cr + 1 < b.count else { return .needMore }
        guard b[cr + 1] == 0x0A else { return .invalid("a v1 header's line must end with CRLF") }
        let line = String(decoding: b[..<cr], as: UTF8.self)
        let words = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard words.count >= 2 else { return .invalid("a v1 header names its protocol") }
        switch words[1] {
        case "UNKNOWN":
            return .header(source: nil, length: cr + 2)
        case "TCP4", "TCP6":
            guard words.count == 6 else { return .invalid("a v1 TCP header has source, destination and both ports") }
            let family = words[1] == "TCP4" ? IPAddress.Family.v4 : .v6
            guard let source = IPAddress(words[2]), source.family == family, let destination = IPAddress(words[3]), destination.family == family else {
                return .invalid("a v1 header's addresses must be \(words[1] == "TCP4" ? "IPv4" : "IPv6")")
            }
            guard let sourcePort = port(words[4]), port(words[5]) != nil else { return .invalid("a v1 header's ports are 0-65535") }
            return .header(source: source.withPort(sourcePort), length: cr + 2)
        default:
            return .invalid("a v1 header's protocol is TCP4, TCP6 or UNKNOWN")
        }
    }

    private static func port(_ text: String) -> Int? {
        guard (1...5).contains(text.count), text.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(text), n <= 65535,
              text == String(n) else { return nil }
        return n
    }

    // MARK: Version 2: the signature, version and command, family, length, addresses, TLVs

    private static func readV2(_ b: [UInt8]) -> Outcome {
        guard b.count >= 16 else { return .needMore }
        let version = b[12] >> 4, command = b[12] & 0x0F
        guard version == 2 else { return .invalid("a v2 header's version is 2") }
        guard command <= 1 else { return .invalid("a v2 header's command is LOCAL or PROXY") }
        let length = Int(b[14]) << 8 | Int(b[15])
        guard length <= v2MaxBody else { return .invalid("a v2 header's addresses and TLVs are at most \(v2MaxBody) bytes here") }
        guard b.count >= 16 + length else { return .needMore }
        let total = 16 + length
        // LOCAL: the proxy speaking for itself (a health check); its own address is the connection's.
        if command == 0 { return .header(source: nil, length: total) }
        let body = Array(b[16..<total])
        switch (b[13] >> 4, b[13] & 0x0F) {
        case (0, _):
            return .header(source: nil, length: total)
        case (1, 1):
            guard body.count >= 12 else { return .invalid("a v2 IPv4 header carries 12 bytes of addresses") }
            let port = Int(body[8]) << 8 | Int(body[9])
            return .header(source: IPAddress(bytes: Array(body[0..<4]))?.withPort(port), length: total)
        case (2, 1):
            guard body.count >= 36 else { return .invalid("a v2 IPv6 header carries 36 bytes of addresses") }
            let port = Int(body[32]) << 8 | Int(body[33])
            return .header(source: IPAddress(bytes: Array(body[0..<16]))?.withPort(port), length: total)
        case (3, _):
            // A Unix socket's path says nothing of the client.
            return .header(source: nil, length: total)
        default:
            return .invalid("a v2 header's family is unspecified, TCP over IPv4 or IPv6, or a Unix stream")
        }
    }
}
