// Gaps in a channel's messages as one gateway receives them (docs/cluster.md).
// A home sends a gateway each message of a channel that some session there
// wants, in seq order, over one FIFO (a loop's inbox, or one NATS subject
// between nodes). Two things break that chain in a cluster: a home killed
// between committing a message and sending it (its successor, caught up from
// the log, never sends it), and NATS itself, which delivers at most once.
// A channel's seqs have no holes, so the seq is the log position that tells
// the gateway it missed something: after seq n it expects n + 1. When a later
// one comes first, the gateway holds it (and whatever follows for the
// channel), asks the channel's home for the messages in between, delivers
// those, then what it held, in order. An answer that never comes is given up
// after a deadline: the held messages go out rather than wait for ever.
//
// A gateway's interest in a channel can end and start again (its last
// subscriber left; a small server grew past the threshold and back), and
// the messages meanwhile were rightly not sent: the chain is forgotten when
// the interest ends, and restarts when the audience (subscribers or online
// members) changes. Pure: the gateway owns one and does the asking.

public struct ChannelGaps<Event> {
    /// What to do with a message that just arrived.
    public enum Arrival: Equatable {
        /// Deliver it now.
        case deliver
        /// Already delivered (a replay crossed a live copy): drop it.
        case duplicate
        /// Held behind a gap being fetched.
        case held
        /// Held; fetch the channel's messages after `after` and before `before`, then call `filled`.
        case fetch(after: UInt64, before: UInt64)
    }

    private struct Line {
        var server: UInt64
        var last: UInt64
        /// Whether the messages go to online members (a small server) rather than subscribers.
        var toMembers: Bool
        /// Messages held while a gap is fetched, in arrival order (seq 0: not a new message, e.g. an edit).
        var waiting: [(seq: UInt64, event: Event)] = []
        var askedAt: UInt64 = 0
        var fetching: Bool { askedAt != 0 }
    }

    private var lines: [UInt64: Line] = [:]

    public init() {}

    /// Channels with a fetch outstanding.
    public var fetching: Int { lines.values.count(where: \.fetching) }

    /// A live message (`seq` > 0) or a change to one (`seq` 0) of `channel` arrived at `now`.
    public mutating func arrived(_ channel: UInt64, server: UInt64, seq: UInt64, toMembers: Bool, _ event: Event,
                                 now: UInt64) -> Arrival {
        guard var line = lines[channel], line.toMembers == toMembers else {
            if seq != 0 { lines[channel] = Line(server: server, last: seq, toMembers: toMembers) }
            return .deliver
        }
        if line.fetching {
            lines[channel]!.waiting.append((seq, event))
            return .held
        }
        if seq == 0 { return .deliver }
        if seq <= line.last { return .duplicate }
        if seq == line.last + 1 {
            lines[channel]!.last = seq
            return .deliver
        }
        line.waiting = [(seq, event)]
        line.askedAt = max(now, 1)
        lines[channel] = line
        return .fetch(after: line.last, before: seq)
    }

    /// A message the home sent again to fill a gap: whether to deliver it.
    public mutating func replayed(_ channel: UInt64, seq: UInt64) -> Bool {
        guard let line = lines[channel], seq > line.last else { return false }
        lines[channel]!.last = seq
        return true
    }

    /// The home sent everything it has up to `upTo`: the held messages, to
    /// deliver now in order (without those delivered meanwhile).
    public mutating func filled(_ channel: UInt64, upTo: UInt64) -> [Event] {
        guard var line = lines[channel], line.fetching else { return [] }
        line.last = max(line.last, upTo)
        var out: [Event] = []
        for (seq, event) in line.waiting where seq == 0 || seq > line.last {
            line.last = max(line.last, seq)
            out.append(event)
        }
        line.waiting = []
        line.askedAt = 0
        lines[channel] = line
        return out
    }

    /// Channels whose fetch was asked before `cutoff` (the home died or left
    /// meanwhile), each with what was held: given up, delivered as they are.
    public mutating func overdue(askedBefore cutoff: UInt64) -> [(channel: UInt64, held: [Event])] {
        var out: [(channel: UInt64, held: [Event])] = []
        for (channel, line) in lines where line.fetching && line.askedAt < cutoff {
            out.append((channel, filled(channel, upTo: line.last)))
        }
        return out
    }

    /// The gateway no longer wants `channel`'s messages from subscribers.
    public mutating func forget(channel: UInt64) {
        if lines[channel]?.toMembers == false { lines.removeValue(forKey: channel) }
    }

    /// The gateway has no online member of `server` any more.
    public mutating func forget(membersOf server: UInt64) {
        lines = lines.filter { !($0.value.toMembers && $0.value.server == server) }
    }

    /// The seq last delivered in `channel` (nil: no chain kept).
    public func last(in channel: UInt64) -> UInt64? { lines[channel]?.last }
}
