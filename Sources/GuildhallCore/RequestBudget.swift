// How many requests a session may make, per rate class (docs/protocol.md,
// docs/reliability.md): a token bucket per class that refills at the class's rate
// and holds twice that (a second's burst on top of the steady rate). A
// request over the budget is refused with the time until one more fits;
// a session refused again and again within a window is abusing the server
// and is closed. Pure: the caller passes the time.
//
// Buckets count thousandths of a request in integers: a rate of r per second
// refills r per millisecond, so no floating point and no drift.

public struct RequestBudget: Sendable, Equatable {
    /// Requests per second per class; 0 means no limit.
    public struct Rates: Sendable, Equatable {
        public var perSecond: [Int]
        public init(_ perSecond: [Int]) { self.perSecond = perSecond }
    }

    public enum Verdict: Sendable, Equatable {
        case allowed
        /// Refused; one more fits after this many milliseconds.
        case refused(retryAfterMs: UInt32)
        /// Refused once too often within the window: close the session.
        case abusive
    }

    private var tokens: [Int32]
    private var refilled: UInt64
    private var strikes: UInt16 = 0
    private var strikesSince: UInt64 = 0

    /// Refusals within this window that make a session abusive.
    public static let strikeWindowMs: UInt64 = 10_000

    public init(classes: Int, now: UInt64) {
        tokens = Array(repeating: Int32.max, count: classes)
        refilled = now
    }

    /// Takes one request of class `index` at `now`, under `rates`; `maxStrikes` refusals within the window make it abusive.
    public mutating func take(_ index: Int, rates: Rates, maxStrikes: Int, now: UInt64) -> Verdict {
        let rate = rates.perSecond[index]
        guard rate > 0 else { return .allowed }
        let elapsed = now > refilled ? now - refilled : 0
        refilled = max(refilled, now)
        if elapsed > 0 {
            for i in tokens.indices where rates.perSecond[i] > 0 {
                let cap = Int64(rates.perSecond[i]) * 2000
                tokens[i] = Int32(min(cap, Int64(tokens[i]) + Int64(rates.perSecond[i]) * Int64(min(elapsed, 1_000_000))))
            }
        }
        let cap = Int64(rate) * 2000
        if Int64(tokens[index]) > cap { tokens[index] = Int32(cap) }
        if tokens[index] >= 1000 {
            tokens[index] -= 1000
            return .allowed
        }
        if now >= strikesSince + Self.strikeWindowMs {
            strikesSince = now
            strikes = 0
        }
        strikes &+= 1
        if Int(strikes) > maxStrikes { return .abusive }
        let missing = 1000 - Int64(tokens[index])
        return .refused(retryAfterMs: UInt32((missing + Int64(rate) - 1) / Int64(rate)))
    }
}

/// Failed logins per key (a user, a peer address; docs/reliability.md A6): a small
/// burst, then one per interval (GCRA: each key keeps only the time its
/// budget is full again). An attempt over the budget is not checked at all.
public struct LoginFailures: Sendable {
    private var due: [String: UInt64] = [:]

    public init() {}

    /// Milliseconds until `key` may fail again, or 0 when it may now.
    public func wait(_ key: String, now: UInt64, burst: Int, intervalMs: UInt64) -> UInt64 {
        guard let d = due[key], intervalMs > 0 else { return 0 }
        let allowance = UInt64(max(burst, 1) - 1) * intervalMs
        return d > now + allowance ? d - now - allowance : 0
    }

    /// Counts a failure of `key` at `now`.
    public mutating func failed(_ key: String, now: UInt64, intervalMs: UInt64) {
        guard intervalMs > 0 else { return }
        due[key] = max(due[key] ?? now, now) + intervalMs
        // Keys whose budget is full again hold nothing worth keeping.
        if due.count > 100_000 { due = due.filter { $0.value > now } }
    }
}
