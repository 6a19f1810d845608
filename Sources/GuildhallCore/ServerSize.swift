// Which servers are small: a small server's messages and notifications go
// to every online member without subscriptions (docs/features.md). A server
// is large from `threshold` members on. With a low mark set, a server that
// became large turns small again only below the low mark, so one that hovers
// around the threshold does not switch its members' delivery back and
// forth with each join and leave. A server between the marks keeps what it
// was; at startup it counts as having grown there (small). Values only.

public struct ServerSizeMarks: Sendable, Equatable {
    /// Servers with at least this many members are large.
    public var threshold: Int
    /// 0: no hysteresis. Otherwise a large server is small again below this many members.
    public var lowMark: Int

    public init(threshold: Int, lowMark: Int = 0) {
        self.threshold = threshold
        self.lowMark = lowMark
    }

    /// Whether a server of `members` is large now, given whether it was.
    public func isLarge(members: Int, wasLarge: Bool) -> Bool {
        if members >= threshold { return true }
        let low = lowMark == 0 ? threshold : min(lowMark, threshold)
        return members >= low && wasLarge
    }
}

extension Directory {
    /// Whether `server` delivers to every online member (false for one not held).
    public func isSmall(_ server: ServerID) -> Bool { servers[server].map { !$0.large } ?? false }

    /// Rechecks a server's size after its members changed.
    func resize(_ server: ServerID) {
        guard let s = servers[server] else { return }
        let large = sizeMarks.isLarge(members: s.members.count, wasLarge: s.large)
        if large != s.large { servers[server]!.large = large }
    }
}
