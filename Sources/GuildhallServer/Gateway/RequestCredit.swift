// How many requests, and request bytes, one session has waiting for homes on
// other loops. A home on another loop hears of pauses a turn late, so each
// session may have only so many waiting (and is not read meanwhile). The
// count is above any pipelining window a client uses; the bytes bound what a
// publisher of large messages gets in before a pause arrives. A value, no I/O.

struct RequestCredit {
    static let maxRequests = 4096
    static let maxBytes = 1 << 20

    private(set) var requests = 0
    private(set) var bytes = 0

    /// Requests of `bytes` in all went to a home on another loop; returns whether the session is now out of credit (stop reading it).
    mutating func forwarded(requests count: Int = 1, bytes size: Int) -> Bool {
        requests += count
        bytes += size
        return requests >= Self.maxRequests || bytes >= Self.maxBytes
    }

    /// A home answered one of them. Answers need not come in order, so each
    /// takes back the average size in flight. Returns whether the session is
    /// back under half its credit (a session paused for credit is read again).
    mutating func answered() -> Bool {
        guard requests > 0 else { return true }
        bytes -= bytes / requests
        requests -= 1
        if requests == 0 { bytes = 0 }
        return requests <= Self.maxRequests / 2 && bytes <= Self.maxBytes / 2
    }
}
