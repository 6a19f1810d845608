// Interest split in two (DESIGN §9, CLUSTER §1), the gateway's half: which
// of this gateway's sessions hold each channel's message subscription, each
// with its user's read position and mentions there (what the unread trailer
// needs), as the channel's home sent them. A home sends one `ChannelEvent` per
// message to each gateway with such sessions (`InterestFeed`, its half);
// the gateway finds them here and writes each its own trailer, so the
// home's cost is per gateway and the per-recipient work runs on the loop
// that holds the recipients. Updates come from the home in order with its
// events, so every trailer counts what the home had when it sent the event.
// Gateway loop only.

import GuildhallCore
import GuildhallLoop
import GuildhallWire

/// A home's change to a gateway's half of the interest.
enum InterestUpdate: Sendable {
    /// Session `key` of `user` took `channel`'s message subscription (with the
    /// user's state in the channel), or dropped it (nil).
    case holds(key: UInt64, user: UserID, channel: ChannelID, state: PositionState?)
    /// `user`'s read position or mentions in `channel` moved.
    case position(user: UserID, channel: ChannelID, PositionState)
}

/// One channel message for every session of a gateway that holds the channel's message subscription.
struct ChannelEvent: Sendable {
    let payload: SharedBytes
    /// The channel after the message (its last seq and time).
    let channel: ChannelRecord
    /// The sender's session, answered instead.
    let except: UInt64
    /// Inbox cursors of mentioned users whose items were filed at this home.
    let cursors: [UserID: UInt64]
}

final class GatewayInterest {
    /// Per channel, each holding session with its user's state there (kept
    /// beside the key, so a delivery reads it without a look-up by user id).
    private var holders: [ChannelID: [UInt64: PositionState]] = [:]
    /// Per (user, channel), the user's sessions here that hold it (where a moved position goes).
    private var sessionsOf: [ReadPositions.Key: [UInt64]] = [:]

    func apply(_ update: InterestUpdate) {
        switch update {
        case .holds(let key, let user, let channel, let state?):
            guard holders[channel, default: [:]].updateValue(state, forKey: key) == nil else { return }
            sessionsOf[ReadPositions.Key(user, channel), default: []].append(key)
        case .holds(let key, let user, let channel, nil):
            guard holders[channel]?.removeValue(forKey: key) != nil else { return }
            if holders[channel]?.isEmpty == true { holders.removeValue(forKey: channel) }
            let k = ReadPositions.Key(user, channel)
            sessionsOf[k]?.removeAll { $0 == key }
            if sessionsOf[k]?.isEmpty == true { sessionsOf.removeValue(forKey: k) }
        case .position(let user, let channel, let state):
            for key in sessionsOf[ReadPositions.Key(user, channel)] ?? [] { holders[channel]?[key] = state }
        }
    }

    /// Sessions here holding `channel`'s message subscription, with their users' states.
    func holders(of channel: ChannelID) -> [UInt64: PositionState]? { holders[channel] }
}

extension Gateway {
    /// A message for this gateway's holders of its channel's subscription, each with its own trailer.
    func deliver(_ e: ChannelEvent, from home: Int) {
        guard let keys = interest.holders(of: e.channel.id) else { return }
        let now = clock()
        let displayCap = UInt64(settings.unreadDisplayCap), window = UInt64(settings.mentionWindowSeconds) * 1000
        for (key, state) in keys where key != e.except {
            lent[key]?._withUnsafeGuaranteedRef { s in
                let u = state.unread(in: e.channel, now: now, displayCap: displayCap, mentionWindowMs: window)
                s.push(event: e.payload,
                       unread: FrameEncoding.RecipientUnread(unreadCount: u.unreadCount, mentionedCount: u.mentionedCount,
                                                             ackTimestamp: u.ackTimestamp, readSeq: u.readSeq),
                       cursor: e.cursors.isEmpty ? 0 : e.cursors[s.user] ?? 0)
            }
        }
        if home != index { appliedBytes[home] &+= (e.payload.count + Self.eventOverhead) * keys.count }
    }
}
