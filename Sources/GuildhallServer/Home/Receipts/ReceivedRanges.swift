// Received status that reading and delivery set (docs/features.md) reaches
// the user's other devices at once: a moved read position, a device's
// `Ack.received`, a direct conversation delivered or read by time each
// set flags on a range of messages, with no row per message. The range goes
// to the user's home (which serves every session of the user; the home
// where it moved may serve only the one that moved it), is owed to the
// user's other sessions there and sent at the end of the turn, one
// `received_status` event per session carrying the latest range of each
// kind per channel. A session behind on its writes gets it once it catches
// up, as unread notices. Part of `Reading`. Loop thread only.

import GuildhallCore
import GuildhallWire

/// Which of a channel's ranges: read (and retrieved), or retrieved only.
struct ReceivedRangeKey: Hashable {
    let channel: UInt64
    let read: Bool
}

extension Reading {
    /// Owes `user`'s sessions, except the one that moved it, a range of messages that gained flags.
    func owe(received range: GHReceivedRange, of user: UserID, except: UInt64) {
        let userHome = services.place(user: user)
        guard userHome == services.index else { return services.links.post(.mail(services.index, [.receivedRange(user: user, range, except: except)]), to: userHome) }
        oweHere(received: range, of: user, except: except)
    }

    /// Owes the user's sessions this home serves; mail from another home
    /// comes here without being sent on (in a cluster whose nodes see a
    /// user's home differently for a moment, it would go back and forth).
    func oweHere(received range: GHReceivedRange, of user: UserID, except: UInt64) {
        let key = ReceivedRangeKey(channel: range.channelID, read: range.isRead)
        for s in registry.sessions(of: user).values where s.key != except {
            if var owed = s.pendingReceived[key] {
                owed.seq = max(owed.seq, range.seq)
                owed.sentUntil = max(owed.sentUntil, range.sentUntil)
                s.pendingReceived[key] = owed
            } else {
                s.pendingReceived[key] = range
            }
            s.markOwing()
        }
    }

    /// At the end of the turn: the ranges owed to `s` in one event.
    func emitReceived(_ s: HomeSession) {
        guard !s.pendingReceived.isEmpty else { return }
        var list = GHReceivedStatusList()
        list.ranges = s.pendingReceived.sorted { ($0.key.channel, $0.key.read ? 1 : 0) < ($1.key.channel, $1.key.read ? 1 : 0) }.map(\.value)
        s.pendingReceived.removeAll()
        s.push(event: GHEvent.OneOf_Body.receivedStatus(list).sharedPayload)
    }
}

extension GHReceivedRange {
    /// Messages of `channel` up to `seq` (or, in a conversation, sent until
    /// a time), read (and so retrieved) or retrieved.
    static func upTo(_ seq: UInt64 = 0, sentUntil: UInt64 = 0, in channel: UInt64, read: Bool) -> GHReceivedRange {
        var r = GHReceivedRange()
        r.channelID = channel
        r.seq = seq
        r.sentUntil = sentUntil
        r.isRead = read
        r.isRetrieved = true
        return r
    }
}
