// Channel messages a session was sent that its client may not have read,
// for the answer of a resume that can no longer replay them (docs/reliability.md,
// docs/features.md): offline sync carries only what is addressed to the user, so
// the answer names, per channel, the range of seqs to fetch from history
// (`LoginResult.missed`). Kept from the events the replay buffer let go
// before the client acknowledged them (a full buffer: rare, so decoding the
// payload there costs the delivery path nothing) and from what it still holds.

import GuildhallLoop
import GuildhallWire

struct MissedMessages: Sendable, Equatable {
    struct Range: Sendable, Equatable {
        let server: UInt64
        let channel: UInt64
        var first: UInt64
        var last: UInt64
    }

    private(set) var ranges: [Range]

    init(ranges: [Range] = []) { self.ranges = ranges }

    var isEmpty: Bool { ranges.isEmpty }

    /// Notes the event `payload` (Frame{event{...}}) if it is a channel message.
    mutating func note(_ payload: SharedBytes) {
        let bytes = [UInt8](UnsafeRawBufferPointer(start: payload.base, count: payload.count))
        guard let frame = try? GHFrame(serializedBytes: bytes), case .message(let m)? = frame.event.body, m.serverID != 0 else { return }
        note(server: m.serverID, channel: m.channelID, seq: m.seq)
    }

    mutating func note(server: UInt64, channel: UInt64, seq: UInt64) {
        guard let i = ranges.firstIndex(where: { $0.channel == channel }) else {
            ranges.append(Range(server: server, channel: channel, first: seq, last: seq))
            return
        }
        ranges[i].first = min(ranges[i].first, seq)
        ranges[i].last = max(ranges[i].last, seq)
    }

    var gaps: [GHChannelGap] {
        ranges.map { r in
            var g = GHChannelGap()
            g.serverID = r.server
            g.channelID = r.channel
            g.firstSeq = r.first
            g.lastSeq = r.last
            return g
        }
    }
}
