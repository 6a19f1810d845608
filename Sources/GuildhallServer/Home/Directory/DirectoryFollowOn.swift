// What the parts that follow the Directory do once its changes are durable
// (`StateChange.directory`), read from the changes themselves rather than
// handed over by each request: a member saved who was none before joined,
// one removed left, a ban sends the user's guest sessions away, a role or
// override changes who may view what, a deleted server or channel is
// forgotten. So every request that changes membership or access, whichever
// it is (join, invite, code, kick, ban, leave, role, override, transfer,
// server or channel deleted), has its sessions, subscriptions and positions
// follow the same way. `of` reads the changes against the Directory before
// it takes them (values only); `Home.follow` carries them out.
// Loop thread only.

import GuildhallCore

enum DirectoryFollowOn: Equatable {
    /// `user` became a member of `server`.
    case joined(UserID, ServerID)
    /// `user` stopped being a member (left, kicked, banned).
    case left(UserID, ServerID)
    /// `user` was banned from `server`; `until` when the ban ends by itself (0: never).
    case banned(UserID, ServerID, until: UInt64)
    /// Who may view what in `server` changed: for one member, or for all (nil).
    case accessChanged(ServerID, only: UserID?)
    /// `server` was deleted, with its channels and members as they were.
    case serverGone(ServerID, channels: [ChannelID], members: [UserID])
    case channelCreated(ChannelRecord)
    case channelGone(ChannelID)

    /// The follow-ons of `changes`, read against `directory` as it is before it takes them.
    static func of(_ changes: [DirectoryChange], before directory: Directory) -> [DirectoryFollowOn] {
        var followOns: [DirectoryFollowOn] = []
        // Members and channels saved earlier in the same list count as there (a server created with its owner).
        var savedMembers: Set<ReadPositions.Key> = []
        var savedChannels: Set<ChannelID> = []
        // A server created in the list has no access to change yet (its starting roles).
        var created: Set<ServerID> = []
        func accessChanged(_ server: ServerID, only user: UserID?) {
            let f = DirectoryFollowOn.accessChanged(server, only: user)
            if !created.contains(server), !followOns.contains(f) { followOns.append(f) }
        }
        for change in changes {
            switch change {
            case .memberSaved(let m):
                let key = ReadPositions.Key(m.userID, m.serverID)
                if let before = directory.member(m.userID, of: m.serverID) {
                    if before.role != m.role || before.roles != m.roles { accessChanged(m.serverID, only: m.userID) }
                } else if savedMembers.insert(key).inserted {
                    followOns.append(.joined(m.userID, m.serverID))
                }
            case .memberRemoved(let server, let user):
                if directory.member(user, of: server) != nil { followOns.append(.left(user, server)) }
            case .banSaved(let b):
                followOns.append(.banned(b.userID, b.serverID, until: b.expiresAt))
            case .roleSaved(let r):
                accessChanged(r.serverID, only: nil)
            case .roleDeleted(let server, _):
                accessChanged(server, only: nil)
            case .overrideSaved(let o):
                if case .member(let user) = o.target { accessChanged(o.serverID, only: user) } else { accessChanged(o.serverID, only: nil) }
            case .serverDeleted(let server):
                followOns.append(.serverGone(server, channels: directory.channelIDs(of: server).sorted(),
                                             members: directory.memberIDs(of: server).map { Array($0).sorted() } ?? []))
            case .channelSaved(let c):
                if directory.channel(c.id) == nil, savedChannels.insert(c.id).inserted { followOns.append(.channelCreated(c)) }
            case .channelDeleted(let channel):
                followOns.append(.channelGone(channel))
            case .serverSaved(let r):
                if directory.server(r.id) == nil { created.insert(r.id) }
            case .inviteSaved, .inviteRemoved, .banRemoved, .inviteCodeSaved, .inviteCodeRemoved, .timeoutSaved, .timeoutRemoved:
                break
            }
        }
        return followOns
    }
}

extension Home {
    /// Carries out the follow-ons of directory changes the Directory just took: the
    /// home as a whole, since a directory change reaches most of its parts.
    func follow(_ followOns: [DirectoryFollowOn]) {
        for f in followOns {
            switch f {
            case .joined(let user, let server):
                registry.joined(user, server: server)
                for guest in registry.sessions(of: user).values where guest.guestOf.contains(server) {
                    directoryRequests.guestLeft(guest, server: server, notifyMembers: false)
                }
                // A new member starts with everything already in the server read (its writes went with the join).
                let now = now()
                for channel in directory.channelIDs(of: server) {
                    guard let c = directory.channel(channel) else { continue }
                    positions.markRead(user, channel, upTo: c.lastSeq, now: now)
                    interest.positionMoved(user, channel, in: server)
                }
                // Its auto-mode sessions take the server's subscriptions, it and the online members
                // see each other's presence (a small server), and its profile is copied onto its record.
                subscriptions.memberJoined(user, server: server)
                presences.memberJoined(user, server: server)
                profiles.admitted(user)
            case .left(let user, let server):
                registry.left(user, server: server)
                subscriptions.memberRemoved(user, server: server)
            case .banned(let user, let server, let until):
                moderation.banEnds(at: until)
                for guest in registry.sessions(of: user).values where guest.guestOf.contains(server) {
                    directoryRequests.guestLeft(guest, server: server, notifyMembers: false)
                }
            case .accessChanged(let server, let user):
                subscriptions.accessChanged(in: server, only: user)
            case .serverGone(let server, let channels, let members):
                for session in registry.guests(of: server).values { directoryRequests.guestLeft(session, server: server, notifyMembers: false) }
                for c in channels {
                    book.dropChannel(c)
                    typing.board.dropChannel(c)
                    positions.forgetChannel(c)
                }
                registry.serverDeleted(server)
                for m in members { subscriptions.memberRemoved(m, server: server) }
            case .channelCreated(let c):
                // Every gateway learns the channel's guild before anyone hears of the channel.
                links.place(c.id, in: c.serverID, local: gateway.routes)
            case .channelGone(let channel):
                typing.board.dropChannel(channel)
                positions.forgetChannel(channel)
                groupReceipts.receipts.remove(channel: channel)
            }
        }
    }
}
