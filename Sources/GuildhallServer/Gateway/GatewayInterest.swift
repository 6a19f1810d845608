// Interest split in two (docs/architecture.md, docs/cluster.md), the gateway's half: which
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
    /// Session `key` of `user` is an online member of `server` (with the
    /// user's states in its channels, where not the starting state), or no longer (nil).
    case member(key: UInt64, user: UserID, server: ServerID, states: [ChannelID: PositionState]?)
    /// `user`'s read position or mentions in `channel` (of `server`) moved.
    case position(user: UserID, channel: ChannelID, server: ServerID, PositionState)
}

/// One channel message for every session of a gateway that holds the channel's message subscription.
/// Kept small (about 80 bytes, two references): it is copied at each hand-on
/// from the home to a gateway's run, and most messages carry no mention
/// cursors, hidden members or files, which wait in `extras` when they do.
struct ChannelEvent: Sendable {
    let payload: SharedBytes
    /// The channel after the message (its last seq and time).
    let channel: ChannelTip
    /// The sender's session, answered instead.
    let except: UInt64
    /// For every online member of the channel's server (a small server), not only its subscribers.
    let toMembers: Bool
    /// Sent again to fill a gateway's gap.
    var replayed = false
    /// The message's seq: its place in the channel, by which a gateway sees a
    /// gap (ChannelGaps); 0 for a change to an earlier message.
    var seq: UInt64 = 0
    /// What few messages carry; nil when none of it.
    let extras: ChannelEventExtras?

    init(payload: SharedBytes, channel: ChannelTip, except: UInt64, toMembers: Bool, cursors: [UserID: UInt64] = [:],
         hiddenFrom: Set<UserID> = [], seq: UInt64 = 0, replayed: Bool = false, files: [FileAttachment] = [], filesInUpdate: Bool = false) {
        self.payload = payload
        self.channel = channel
        self.except = except
        self.toMembers = toMembers
        self.seq = seq
        self.replayed = replayed
        extras = cursors.isEmpty && hiddenFrom.isEmpty && files.isEmpty && !filesInUpdate
            ? nil : ChannelEventExtras(cursors: cursors, hiddenFrom: hiddenFrom, files: files, filesInUpdate: filesInUpdate)
    }

    /// Inbox cursors of mentioned users whose items were filed at this home.
    var cursors: [UserID: UInt64] { extras?.cursors ?? [:] }
    /// With `toMembers`: online members who may not view the channel (empty
    /// unless the server's permissions restrict viewing somewhere).
    var hiddenFrom: Set<UserID> { extras?.hiddenFrom ?? [] }
    /// The files the message carries, left out of `payload`: each recipient's
    /// copy gets them with its own links (AttachmentLinks), in the message or,
    /// when `filesInUpdate`, in the update's message.
    var files: [FileAttachment] { extras?.files ?? [] }
    var filesInUpdate: Bool { extras?.filesInUpdate ?? false }
}

/// A channel event's rarer parts (see `ChannelEvent`). Immutable once made.
final class ChannelEventExtras: Sendable {
    let cursors: [UserID: UInt64]
    let hiddenFrom: Set<UserID>
    let files: [FileAttachment]
    let filesInUpdate: Bool

    init(cursors: [UserID: UInt64], hiddenFrom: Set<UserID>, files: [FileAttachment], filesInUpdate: Bool) {
        self.cursors = cursors
        self.hiddenFrom = hiddenFrom
        self.files = files
        self.filesInUpdate = filesInUpdate
    }
}

final class GatewayInterest {
    /// Per channel, each holding session with its user's state there (kept
    /// beside the key, so a delivery reads it without a look-up by user id).
    private(set) var holders: [ChannelID: [UInt64: PositionState]] = [:]
    /// Per (user, channel), the user's sessions here that hold it (where a moved position goes).
    private var sessionsOf: [ReadPositions.Key: FewIDs] = [:]
    /// Per server, each session here of an online member with its user's states in the server's channels.
    private(set) var members: [ServerID: [UInt64: [ChannelID: PositionState]]] = [:]
    /// Per (user, server), the user's sessions here that are online members of it.
    private var memberSessionsOf: [ReadPositions.Key: FewIDs] = [:]
    /// Per channel, the last message seq delivered here (in a cluster; ChannelGapFill.swift).
    var gaps = ChannelGaps<ChannelEvent>()
    /// Messages of one channel waiting to go out recipient by recipient (FanoutRun.swift).
    var run = FanoutRun()
    /// Per session here, what it holds: forgotten here when it ends, even if
    /// the home that told of it died first (and never says it is gone).
    private var bySession: [UInt64: (user: UserID, channels: FewIDs, servers: FewIDs)] = [:]

    func apply(_ update: InterestUpdate) {
        switch update {
        case .holds(let key, let user, let channel, let state?):
            guard holders[channel, default: [:]].updateValue(state, forKey: key) == nil else { return }
            sessionsOf[ReadPositions.Key(user, channel), default: FewIDs()].insert(key)
            bySession[key, default: (user, FewIDs(), FewIDs())].channels.insert(channel)
        case .holds(let key, let user, let channel, nil):
            guard holders[channel]?.removeValue(forKey: key) != nil else { return }
            if holders[channel]?.isEmpty == true {
                holders.removeValue(forKey: channel)
                gaps.forget(channel: channel)
            }
            let k = ReadPositions.Key(user, channel)
            sessionsOf[k]?.remove(key)
            if sessionsOf[k]?.isEmpty == true { sessionsOf.removeValue(forKey: k) }
            bySession[key]?.channels.remove(channel)
        case .member(let key, let user, let server, let states?):
            guard members[server, default: [:]].updateValue(states, forKey: key) == nil else { return }
            memberSessionsOf[ReadPositions.Key(user, server), default: FewIDs()].insert(key)
            bySession[key, default: (user, FewIDs(), FewIDs())].servers.insert(server)
        case .member(let key, let user, let server, nil):
            guard members[server]?.removeValue(forKey: key) != nil else { return }
            if members[server]?.isEmpty == true {
                members.removeValue(forKey: server)
                gaps.forget(membersOf: server)
            }
            let k = ReadPositions.Key(user, server)
            memberSessionsOf[k]?.remove(key)
            if memberSessionsOf[k]?.isEmpty == true { memberSessionsOf.removeValue(forKey: k) }
            bySession[key]?.servers.remove(server)
        case .position(let user, let channel, let server, let state):
            // In place (DictionaryChange.swift): a told position is a send's, in a small server.
            sessionsOf[ReadPositions.Key(user, channel)]?.keys.forEach { key in holders.change(channel) { $0[key] = state } }
            memberSessionsOf[ReadPositions.Key(user, server)]?.keys.forEach { key in
                members.change(server) { $0.change(key) { $0[channel] = state } }
            }
        }
    }

    /// Session `key` ended here: it holds nothing any more.
    func forget(session key: UInt64) {
        guard let held = bySession.removeValue(forKey: key) else { return }
        held.channels.keys.forEach { apply(.holds(key: key, user: held.user, channel: $0, state: nil)) }
        held.servers.keys.forEach { apply(.member(key: key, user: held.user, server: $0, states: nil)) }
    }



}

extension GatewayInterest {
    /// The sessions here that `e` is for (what the home counted when it sent it).
    func audience(of e: ChannelEvent) -> Int {
        e.toMembers ? members[e.channel.serverID]?.count ?? 0 : holders[e.channel.id]?.count ?? 0
    }
}
