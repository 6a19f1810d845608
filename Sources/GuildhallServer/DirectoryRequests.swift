// Requests on servers, members and channels. Each checks and applies the
// change in the Directory, commits it, then answers and notifies. Loop
// thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

extension Home {
    /// Runs `body`, answering its Failure as an error.
    func attempt(_ id: UInt64, _ s: HomeSession, _ body: () throws(Failure) -> Void) {
        do { try body() } catch { s.fail(id, error) }
    }
}

/// The requests on servers, members and channels (and, in Guests.swift, guests and bans).
final class DirectoryRequests: HomePart {
    unowned let home: Home

    init(home: Home) { self.home = home }
}

extension DirectoryRequests {
    func info(_ r: ServerRecord) -> GHServerInfo { GHServerInfo(r, memberCount: directory.memberCount(r.id)) }

    // MARK: Servers

    func createServer(_ r: GHCreateServer, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            let now = now()
            guard let guild = home.newGuildID(now: now) else {
                throw Failure(.unavailable, "this node serves no shard for a new server now; retry, or connect to another node")
            }
            let record = ServerRecord(id: guild, name: r.name, icon: r.icon, custom: r.custom,
                                      owner: s.user, openJoin: r.openJoin, createdAt: now, allowGuests: r.allowGuests)
            let changes = try home.directory.createServer(record)
            registry.joined(s.user, server: record.id)
            persist(changes.map(StoreWrite.directory), id: id, for: s, result: { .server(self.info(record)) }) {
                self.home.subscriptions.memberJoined(s.user, server: record.id)
            }
        }
    }

    func updateServer(_ r: GHUpdateServer, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            if r.hasAllowGuests { try home.requirePermission(.manageGuests, at: .server(r.serverID), for: s) }
            let record = try home.directory.updateServer(r.serverID, by: s.user, name: r.hasName ? r.name : nil, icon: r.hasIcon ? r.icon : nil,
                                                    custom: r.hasCustom ? r.custom : nil, openJoin: r.hasOpenJoin ? r.openJoin : nil,
                                                    allowGuests: r.hasAllowGuests ? r.allowGuests : nil)
            persist([.directory(.serverSaved(record))], id: id, for: s, result: { .server(self.info(record)) }) {
                self.home.notify(.serverUpdated, .server(record.id, isPublic: true), actor: s.user) { $0.server = self.info(record) }
                self.guestsRecheck(record.id)
            }
        }
    }

    func deleteServer(_ r: GHDeleteServer, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            let guests = registry.guests(of: r.serverID).values.map(\.user)
            let channels = home.directory.channelIDs(of: r.serverID)
            let (record, members) = try home.directory.deleteServer(r.serverID, by: s.user)
            for session in registry.guests(of: record.id).values { guestLeft(session, server: record.id, notifyMembers: false) }
            for c in channels { home.book.dropChannel(c); home.typing.board.dropChannel(c); home.positions.forgetChannel(c) }
            registry.serverDeleted(record.id)
            for m in members { home.subscriptions.memberRemoved(m, server: record.id) }
            persist([.directory(.serverDeleted(record.id))], id: id, for: s, result: { .ok(GHOk()) }) {
                self.home.notify(.serverDeleted, .nobody, actor: s.user, targeted: members + guests) { n in
                    n.serverID = record.id
                    n.server = GHServerInfo(record, memberCount: 0)
                }
            }
        }
    }

    func getServers(_ r: GHGetServers, id: UInt64, from s: HomeSession) {
        guard r.serverIds.count <= Limits.maxIdsPerRequest else {
            s.fail(id, Failure(.limitReached, "at most \(Limits.maxIdsPerRequest) server ids per request"))
            return
        }
        var list = GHServerList()
        list.servers = r.serverIds.compactMap { try? home.directory.visibleServer($0, to: s.user) }.map(info)
        s.respond(id, .servers(list))
    }

    func listMyServers(id: UInt64, from s: HomeSession) {
        var list = GHServerList()
        list.servers = home.directory.serverIDs(of: s.user).sorted().compactMap { home.directory.server($0) }.map(info)
        s.respond(id, .servers(list))
    }

    // MARK: Members

    func joinServer(_ r: GHJoinServer, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            let changes = try home.directory.join(r.serverID, user: s.user, now: now())
            admitted(changes, server: r.serverID, id: id, from: s)
        }
    }

    func acceptInvite(_ r: GHAcceptInvite, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            let changes = try home.directory.acceptInvite(r.serverID, user: s.user, now: now())
            admitted(changes, server: r.serverID, id: id, from: s)
        }
    }

    private func admitted(_ changes: [DirectoryChange], server: ServerID, id: UInt64, from s: HomeSession) {
        guard case .memberSaved(let member)? = changes.first else { return }
        registry.joined(s.user, server: server)
        for guest in registry.sessions(of: s.user).values where guest.guestOf.contains(server) {
            guestLeft(guest, server: server, notifyMembers: false)
        }
        // A new member starts with everything already in the server read.
        let now = now()
        var writes = changes.map(StoreWrite.directory)
        for channel in home.directory.channelIDs(of: server) {
            guard let c = home.directory.channel(channel) else { continue }
            home.positions.markRead(s.user, channel, upTo: c.lastSeq, now: now)
            home.interest.positionMoved(s.user, channel)
            writes.append(.readPosition(s.user, channel, home.positions.position(s.user, channel)))
        }
        persist(writes, id: id, for: s, result: { .member(GHMember(member)) }) {
            self.home.subscriptions.memberJoined(s.user, server: server)
            self.home.notify(.memberJoined, .server(server, isPublic: false), actor: s.user, targeted: [s.user]) { $0.member = GHMember(member) }
        }
    }

    func inviteMember(_ r: GHInviteMember, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            let invite = try home.directory.invite(r.userID, to: r.serverID, by: s.user, now: now())
            persist([.directory(.inviteSaved(invite))], id: id, for: s, result: { .ok(GHOk()) }) {
                self.home.notify(.memberInvited, .server(r.serverID, isPublic: false), actor: s.user, targeted: [r.userID]) { n in
                    n.member.serverID = r.serverID
                    n.member.userID = r.userID
                    if let server = self.home.directory.server(r.serverID) { n.server = self.info(server) }
                }
            }
        }
    }

    func leaveServer(_ r: GHLeaveServer, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            let member = try home.directory.leave(r.serverID, user: s.user)
            registry.left(s.user, server: r.serverID)
            home.subscriptions.memberRemoved(s.user, server: r.serverID)
            persist([.directory(.memberRemoved(r.serverID, s.user))], id: id, for: s, result: { .ok(GHOk()) }) {
                self.home.notify(.memberLeft, .server(r.serverID, isPublic: false), actor: s.user, targeted: [s.user]) { $0.member = GHMember(member) }
            }
        }
    }

    func kickMember(_ r: GHKickMember, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            let member = try home.directory.kick(r.userID, from: r.serverID, by: s.user)
            registry.left(r.userID, server: r.serverID)
            home.subscriptions.memberRemoved(r.userID, server: r.serverID)
            persist([.directory(.memberRemoved(r.serverID, r.userID))], id: id, for: s, result: { .ok(GHOk()) }) {
                self.home.notify(.memberKicked, .server(r.serverID, isPublic: false), actor: s.user, targeted: [r.userID]) { $0.member = GHMember(member) }
            }
        }
    }

    func listMembers(_ r: GHListMembers, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            var list = GHMemberList()
            list.members = try home.directory.members(of: r.serverID, askedBy: s.user).map(GHMember.init)
            s.respond(id, .members(list))
        }
    }

    // MARK: Channels

    func createChannel(_ r: GHCreateChannel, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            if r.guestVisibility != .followServer { try home.requirePermission(.manageGuests, at: .server(r.serverID), for: s) }
            let now = now()
            let record = try home.directory.createChannel(
                ChannelRecord(id: home.newID(now: now, shard: ShardPlan.shard(guild: r.serverID, shards: settings.shards)), serverID: r.serverID, name: r.name, topic: r.topic, custom: r.custom, createdAt: now,
                              guestVisibility: GuestVisibility(rawValue: r.guestVisibility.rawValue) ?? .followServer),
                by: s.user)
            // Every gateway learns the channel's guild before anyone hears of the channel.
            home.links.place(record.id, in: record.serverID, local: home.gateway.routes)
            channelChanged(.channelCreated, record, change: .channelSaved(record), id: id, from: s)
        }
    }

    func updateChannel(_ r: GHUpdateChannel, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            if r.hasGuestVisibility { try home.requirePermission(.manageGuests, at: .channel(r.channelID), for: s) }
            let record = try home.directory.updateChannel(r.channelID, by: s.user, name: r.hasName ? r.name : nil,
                                                     topic: r.hasTopic ? r.topic : nil, custom: r.hasCustom ? r.custom : nil,
                                                     guestVisibility: r.hasGuestVisibility ? GuestVisibility(rawValue: r.guestVisibility.rawValue) : nil)
            channelChanged(.channelUpdated, record, change: .channelSaved(record), id: id, from: s)
        }
    }

    func deleteChannel(_ r: GHDeleteChannel, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            let record = try home.directory.deleteChannel(r.channelID, by: s.user)
            home.typing.board.dropChannel(record.id)
            home.positions.forgetChannel(record.id)
            home.groupReceipts.receipts.remove(channel: record.id)
            channelChanged(.channelDeleted, record, change: .channelDeleted(record.id), id: id, from: s, answerOK: true)
        }
    }

    private func channelChanged(_ kind: GHNotificationKind, _ record: ChannelRecord, change: DirectoryChange, id: UInt64,
                                from s: HomeSession, answerOK: Bool = false) {
        persist([.directory(change)], id: id, for: s, result: { answerOK ? .ok(GHOk()) : .channel(GHChannelInfo(record)) }) {
            // Subscribers hear of a deleted channel before their subscriptions go.
            self.home.notify(kind, .channel(record, isPublic: true), actor: s.user)
            if kind == .channelDeleted { self.home.book.dropChannel(record.id) }
            if kind != .channelUpdated { self.home.subscriptions.channelsChanged(in: record.serverID) }
            self.guestsRecheck(record.serverID)
        }
    }

    func listChannels(_ r: GHListChannels, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            var list = GHChannelList()
            list.channels = try home.directory.channels(of: r.serverID, askedBy: s.user).map(GHChannelInfo.init)
            s.respond(id, .channels(list))
        }
    }
}
