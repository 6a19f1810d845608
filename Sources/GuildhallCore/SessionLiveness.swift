// When a session must be closed for silence: before login, after the login
// deadline; after login, after the idle timeout without a complete frame,
// or when a frame it started does not complete within the frame deadline
// (a peer that trickles a byte at a time is not alive, only slow on
// purpose). Pure: the caller passes the time, so tests drive it with a
// manual clock.

/// Why a session's time ran out.
public enum LivenessVerdict: Sendable, Equatable {
    case loginTimeout
    case idleTimeout
    case frameTimeout
}

public struct SessionLiveness: Sendable, Equatable {
    public let loginDeadlineMs: UInt64
    public let idleTimeoutMs: UInt64
    public let frameDeadlineMs: UInt64
    public private(set) var connectedAt: UInt64
    public private(set) var lastHeard: UInt64
    public private(set) var loggedIn = false
    /// When the frame the peer is in the middle of began, if it is.
    public private(set) var partialSince: UInt64?

    public init(now: UInt64, loginDeadlineMs: UInt64, idleTimeoutMs: UInt64, frameDeadlineMs: UInt64 = .max / 2) {
        self.loginDeadlineMs = loginDeadlineMs
        self.idleTimeoutMs = idleTimeoutMs
        self.frameDeadlineMs = frameDeadlineMs
        connectedAt = now
        lastHeard = now
    }

    /// A complete frame counts as a sign of life; a byte alone does not.
    public mutating func heard(at now: UInt64) { lastHeard = max(lastHeard, now) }

    /// After reading: whether the peer left a frame unfinished (its clock starts at the first such read).
    public mutating func partialFrame(_ pending: Bool, at now: UInt64) {
        if !pending { partialSince = nil } else if partialSince == nil { partialSince = now }
    }

    public mutating func loggedIn(at now: UInt64) {
        loggedIn = true
        heard(at: now)
    }

    /// Nil while the session may live on at `now`.
    public func verdict(at now: UInt64) -> LivenessVerdict? {
        if !loggedIn { return now >= connectedAt + loginDeadlineMs ? .loginTimeout : nil }
        if let since = partialSince, now >= since + frameDeadlineMs { return .frameTimeout }
        return now >= lastHeard + idleTimeoutMs ? .idleTimeout : nil
    }
}
