// When a session must be closed for silence: before login, after the login
// deadline; after login, after the idle timeout without any frame. Pure: the
// caller passes the time, so tests drive it with a manual clock.

/// Why a session's time ran out.
public enum LivenessVerdict: Sendable, Equatable {
    case loginTimeout
    case idleTimeout
}

public struct SessionLiveness: Sendable, Equatable {
    public let loginDeadlineMs: UInt64
    public let idleTimeoutMs: UInt64
    public private(set) var connectedAt: UInt64
    public private(set) var lastHeard: UInt64
    public private(set) var loggedIn = false

    public init(now: UInt64, loginDeadlineMs: UInt64, idleTimeoutMs: UInt64) {
        self.loginDeadlineMs = loginDeadlineMs
        self.idleTimeoutMs = idleTimeoutMs
        connectedAt = now
        lastHeard = now
    }

    /// Any frame from the peer counts as a sign of life.
    public mutating func heard(at now: UInt64) { lastHeard = max(lastHeard, now) }

    public mutating func loggedIn(at now: UInt64) {
        loggedIn = true
        heard(at: now)
    }

    /// Nil while the session may live on at `now`.
    public func verdict(at now: UInt64) -> LivenessVerdict? {
        if !loggedIn { return now >= connectedAt + loginDeadlineMs ? .loginTimeout : nil }
        return now >= lastHeard + idleTimeoutMs ? .idleTimeout : nil
    }
}
