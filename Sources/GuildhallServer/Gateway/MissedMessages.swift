// Channel messages a session was sent that its client may not have read,
// for the answer of a resume that can no longer replay them (docs/reliability.md,
// docs/features.md): offline sync carries only what is addressed to the user, so
// the answer names, per channel, the range of seqs to fetch from history
// (`LoginResult.missed`). Kept from the events the replay buffer let go
// before the client acknowledged them and from what it still holds. A full
// buffer is not rare under load: the outbound queues publishers may fill
// (`outbound-pause-bytes`) hold more than a buffer, so every event then lets
// one go. The fan-out says on the payload which message it is
// (`SharedBytes.channelMessage`); others are scanned by hand
// (`MessageWire.messagePlace`): decoding them with swift-protobuf took 17%
// of the server's CPU in shape C.

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
        let said = payload.channelMessage
        if said.server != 0 { return note(server: said.server, channel: said.channel, seq: said.seq) }
        let raw = UnsafeRawBufferPointer(start: payload.base, count: payload.count)
        switch MessageWire.messagePlace(raw) {
        case .place(let server, let channel, let seq) where server != 0: note(server: server, channel: channel, seq: seq)
        case .place, .notAMessage: break
        case .unreadable:
            guard let frame = try? GHFrame(serializedBytes: [UInt8](raw)), case .message(let m)? = frame.event.body, m.serverID != 0 else { return }
            note(server: m.serverID, channel: m.channelID, seq: m.seq)
        }
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
