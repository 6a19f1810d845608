// Interest split in two (DESIGN §9, CLUSTER §1), the gateway's half: which
// of this gateway's sessions hold each channel's message subscription, and
// for their users the read positions and mentions the unread trailer needs,
// as the channel's home sent them. A home sends one `ChannelEvent` per
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
    private var holders: [ChannelID: Set<UInt64>] = [:]
    private var positions = ReadPositions()
    /// Per (user, channel): how many of the user's sessions here hold it (the position is kept while any does).
    private var holdings: [ReadPositions.Key: Int] = [:]

    func apply(_ update: InterestUpdate) {
        switch update {
        case .holds(let key, let user, let channel, let state?):
            guard holders[channel, default: []].insert(key).inserted else { return }
            holdings[ReadPositions.Key(user, channel), default: 0] += 1
            positions.replace(user, channel, with: state)
        case .holds(let key, let user, let channel, nil):
            guard holders[channel]?.remove(key) != nil else { return }
            if holders[channel]?.isEmpty == true { holders.removeValue(forKey: channel) }
            let k = ReadPositions.Key(user, channel)
            let n = (holdings[k] ?? 1) - 1
            if n <= 0 {
                holdings.removeValue(forKey: k)
                positions.forget(user, channel)
            } else {
                holdings[k] = n
            }
        case .position(let user, let channel, let state):
            guard holdings[ReadPositions.Key(user, channel)] != nil else { return }
            positions.replace(user, channel, with: state)
        }
    }

    /// Sessions here holding `channel`'s message subscription.
    func holders(of channel: ChannelID) -> Set<UInt64>? { holders[channel] }

    func unread(_ user: UserID, _ e: ChannelEvent, now: UInt64, displayCap: UInt64, mentionWindowMs: UInt64) -> FrameEncoding.RecipientUnread {
        let u = positions.unread(user, channel: e.channel, now: now, displayCap: displayCap, mentionWindowMs: mentionWindowMs)
        return FrameEncoding.RecipientUnread(unreadCount: u.unreadCount, mentionedCount: u.mentionedCount, ackTimestamp: u.ackTimestamp,
                                             readSeq: u.readSeq)
    }
}

extension Gateway {
    /// A message for this gateway's holders of its channel's subscription, each with its own trailer.
    func deliver(_ e: ChannelEvent, from home: Int) {
        guard let keys = interest.holders(of: e.channel.id) else { return }
        let now = clock()
        let displayCap = UInt64(settings.unreadDisplayCap), window = UInt64(settings.mentionWindowSeconds) * 1000
        let interest = self.interest
        for key in keys where key != e.except {
            lent[key]?._withUnsafeGuaranteedRef { s in
                let unread = interest.unread(s.user, e, now: now, displayCap: displayCap, mentionWindowMs: window)
                s.push(event: e.payload, unread: unread, cursor: e.cursors.isEmpty ? 0 : e.cursors[s.user] ?? 0)
            }
        }
        if home != index { appliedBytes[home] &+= (e.payload.count + Self.eventOverhead) * keys.count }
    }
}
