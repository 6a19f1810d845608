// A system notification as a handler decides it: a value in `Effects`
// (docs/architecture.md). Its targeted users' copies are addressed items,
// committed with the change itself; its audience (subscribers, the
// small-server exemption, guests) hears it once that commit is durable
// (Delivery.swift). Nothing here touches state.

import GuildhallCore
import GuildhallWire

struct Notice {
    /// Who a notification reaches, besides targeted users.
    enum Audience {
        /// Server-level: SERVER_MSG subscribers (and GUEST_SERVER ones when public).
        case server(ServerID, isPublic: Bool)
        /// Channel-level: the server's audience plus the channel's subscribers
        /// at any level (and GUEST_CHANNEL ones when public and guest-visible).
        case channel(ChannelRecord, isPublic: Bool)
        /// Only the targeted users.
        case nobody
    }

    let kind: GHNotificationKind
    let audience: Audience
    let actor: UserID
    /// Users who get it whatever they subscribe to, kept in their inboxes for offline sync.
    var targeted: [UserID] = []
    /// What the notification says beyond its kind, actor, time and place (the member, role, server…).
    var body = GHSystemNotification()

    init(_ kind: GHNotificationKind, _ audience: Audience, actor: UserID, targeted: [UserID] = [],
         fill: (inout GHSystemNotification) -> Void = { _ in }) {
        self.kind = kind
        self.audience = audience
        self.actor = actor
        var seen = Set<UserID>()
        self.targeted = targeted.filter { seen.insert($0).inserted }
        fill(&body)
    }

    /// The server whose audience hears it (nil: only the targeted users).
    var server: ServerID? {
        switch audience {
        case .server(let id, _): id
        case .channel(let c, _): c.serverID
        case .nobody: nil
        }
    }

    /// The event, stamped with the time it is told.
    func event(at now: UInt64) -> EventCopy {
        var n = body
        n.kind = kind
        n.actorID = actor
        n.time = now
        switch audience {
        case .server(let id, _): n.serverID = id
        case .channel(let c, _):
            n.serverID = c.serverID
            n.channelID = c.id
            n.channel = GHChannelInfo(c)
        case .nobody: break
        }
        return EventCopy(.notification(n))
    }
}
