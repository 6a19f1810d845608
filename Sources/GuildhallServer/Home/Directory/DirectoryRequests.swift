// Requests on servers, members and channels. Each decides on the committed
// Directory (DirectoryChanges.swift) and returns its effects; the runner
// commits them, and only then do the Directory and the sessions change,
// the caller get its answer and the others their notifications
// (DirectoryCommits.swift). Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

/// The requests on servers, members and channels (and, in Guests.swift, guests and bans).
final class DirectoryRequests: HomePart {
    unowned let services: HomeServices
    /// An icon is an upload, claimed and let go; changes made with a permission are audited.
    private unowned let attachments: Attachments
    unowned let auditTrail: AuditTrail

    init(services: HomeServices, attachments: Attachments, auditTrail: AuditTrail) {
        self.services = services
        self.attachments = attachments
        self.auditTrail = auditTrail
    }
}

extension DirectoryRequests {
    func info(_ r: ServerRecord) -> GHServerInfo { GHServerInfo(r, memberCount: directory.memberCount(r.id)) }

    // MARK: Servers

    func createServer(_ r: GHCreateServer, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            let now = now()
            guard let guild = services.newGuildID(now: now) else {
                throw Failure(.unavailable, "this node serves no shard for a new server now; retry, or connect to another node")
            }
            let record = ServerRecord(id: guild, name: r.name, icon: r.icon, custom: r.custom,
                                      owner: s.user, openJoin: r.openJoin, createdAt: now, allowGuests: r.allowGuests, discoverable: r.discoverable)
            let decision = try directory.decide.createServer(record)
            runner.carryOut(effects(decision, reply: .read(.server(record))), answering: id, to: s)
        }
    }

    /// `icon`: the uploaded picture it names, once checked (and claimed) by `Attachments.resolve`.
    func updateServer(_ r: GHUpdateServer, id: UInt64, from s: HomeSession, icon: FileAttachment? = nil) {
        if r.iconFileID != 0, icon == nil {
            guard !r.hasIcon else { return s.fail(id, .badRequest("name icon or icon_file_id, not both")) }
            return attachments.resolve([r.iconFileID], serverID: r.serverID, channelID: 0, id: id, for: s) { found in
                self.updateServer(r, id: id, from: s, icon: found[0])
            }
        }
        let claimed = icon.map { [$0.fileID] } ?? []
        let picture = icon.map { AttachmentLinks(settings).lasting($0) }
        change(r.serverID, id: id, from: s) { () throws(Failure) in
            do throws(Failure) { return try self.serverUpdate(r, picture: picture, claimed: claimed, from: s) } catch {
                self.attachments.release(claimed)
                throw error
            }
        }
    }

    private func serverUpdate(_ r: GHUpdateServer, picture: String?, claimed: [UInt64], from s: HomeSession) throws(Failure) -> Effects {
        if r.hasAllowGuests { try self.services.requirePermission(.manageGuests, at: .server(r.serverID), for: s) }
        let before = self.directory.server(r.serverID)
        let decision = try self.directory.decide.updateServer(r.serverID, by: s.user, name: r.hasName ? r.name : nil, icon: picture ?? (r.hasIcon ? r.icon : nil),
                                                       custom: r.hasCustom ? r.custom : nil, openJoin: r.hasOpenJoin ? r.openJoin : nil,
                                                       allowGuests: r.hasAllowGuests ? r.allowGuests : nil,
                                                       discoverable: r.hasDiscoverable ? r.discoverable : nil)
        let record = decision.value
        let audit = try self.audit(.serverUpdated, record.id, by: s, target: "\(record.id)", changes: AuditDiff.server(before, record),
                                   onlyIfChanged: true, reason: r.reason)
        let notice = Notice(.serverUpdated, .server(record.id, isPublic: true), actor: s.user) { $0.server = self.info(record) }
        return self.effects(decision, also: audit, reply: .read(.server(record)), notices: [notice],
                            followUps: [.filesClaimed(claimed), .guestsRecheck(record.id)])
    }

    func transferOwnership(_ r: GHTransferOwnership, id: UInt64, from s: HomeSession) {
        change(r.serverID, id: id, from: s) { () throws(Failure) in
            let before = self.directory.server(r.serverID)
            let decision = try self.directory.decide.transferOwnership(r.serverID, to: r.userID, by: s.user)
            let record = decision.value
            let audit = try self.audit(.ownershipTransferred, record.id, by: s, target: r.userID, changes: AuditDiff.server(before, record),
                                       reason: r.reason)
            return self.effects(decision, also: audit, reply: .read(.server(record)),
                                notices: [Notice(.serverUpdated, .server(record.id, isPublic: true), actor: s.user) { $0.server = self.info(record) }])
        }
    }

    func deleteServer(_ r: GHDeleteServer, id: UInt64, from s: HomeSession) {
        change(r.serverID, id: id, from: s) { () throws(Failure) in
            let decision = try self.directory.decide.deleteServer(r.serverID, by: s.user)
            let (record, members) = decision.value
            // Its guests as it is decided (those who come before it is stored are sent away unnotified).
            let guests = self.registry.guests(of: record.id).values.map(\.user)
            return self.effects(decision, reply: .ok, notices: [
                Notice(.serverDeleted, .nobody, actor: s.user, targeted: members + guests) { n in
                    n.serverID = record.id
                    n.server = GHServerInfo(record, memberCount: 0)
                }
            ])
        }
    }

    func getServers(_ r: GHGetServers, id: UInt64, from s: HomeSession) {
        guard r.serverIds.count <= Limits.maxIdsPerRequest else {
            s.fail(id, Failure(.limitReached, "at most \(Limits.maxIdsPerRequest) server ids per request"))
            return
        }
        var list = GHServerList()
        list.servers = r.serverIds.compactMap { try? directory.seen(by: s.user).server($0) }.map(info)
        s.respond(id, .servers(list))
    }

    func listMyServers(id: UInt64, from s: HomeSession) {
        var list = GHServerList()
        list.servers = directory.serverIDs(of: s.user).sorted().compactMap { directory.server($0) }.map(info)
        s.respond(id, .servers(list))
    }

    // MARK: Members

    func joinServer(_ r: GHJoinServer, id: UInt64, from s: HomeSession) {
        change(r.serverID, id: id, from: s) { () throws(Failure) in
            self.admitted(try self.directory.decide.join(r.serverID, user: s.user, now: self.now()), server: r.serverID, from: s)
        }
    }

    func acceptInvite(_ r: GHAcceptInvite, id: UInt64, from s: HomeSession) {
        change(r.serverID, id: id, from: s) { () throws(Failure) in
            self.admitted(try self.directory.decide.acceptInvite(r.serverID, user: s.user, now: self.now()), server: r.serverID, from: s)
        }
    }

    /// A newcomer's effects (a join, an accepted invitation, a join by code): answered with the member, or `reply`.
    func admitted(_ decision: DirectoryDecision<MemberRecord>, server: ServerID, from s: HomeSession,
                  reply: Reply? = nil) -> Effects {
        let member = decision.value
        // A new member starts with everything already in the server read.
        let now = now()
        let read = directory.channelIDs(of: server).compactMap { directory.channel($0) }.map { ($0.id, $0.lastSeq) }
        let positions = read.map { c in StoreWrite.readPosition(s.user, c.0, self.positions.positionAfterReading(s.user, c.0, upTo: c.1, now: now)) }
        let notice = Notice(.memberJoined, .server(server, isPublic: false), actor: s.user, targeted: [s.user]) { $0.member = GHMember(member) }
        return effects(decision, also: positions, reply: reply ?? .result(.member(GHMember(member))), notices: [notice])
    }

    func inviteMember(_ r: GHInviteMember, id: UInt64, from s: HomeSession) {
        change(r.serverID, id: id, from: s) { () throws(Failure) in
            let decision = try self.directory.decide.invite(r.userID, to: r.serverID, by: s.user, now: self.now())
            let audit = try self.audit(.memberInvited, r.serverID, by: s, target: r.userID, reason: r.reason)
            return self.effects(decision, also: audit, reply: .ok, notices: [
                Notice(.memberInvited, .server(r.serverID, isPublic: false), actor: s.user, targeted: [r.userID]) { n in
                    n.member.serverID = r.serverID
                    n.member.userID = r.userID
                    if let server = self.directory.server(r.serverID) { n.server = self.info(server) }
                }
            ])
        }
    }

    func leaveServer(_ r: GHLeaveServer, id: UInt64, from s: HomeSession) {
        change(r.serverID, id: id, from: s) { () throws(Failure) in
            self.removed(try self.directory.decide.leave(r.serverID, user: s.user), kind: .memberLeft, by: s, audit: [])
        }
    }

    func kickMember(_ r: GHKickMember, id: UInt64, from s: HomeSession) {
        change(r.serverID, id: id, from: s) { () throws(Failure) in
            let decision = try self.directory.decide.kick(r.userID, from: r.serverID, by: s.user)
            return self.removed(decision, kind: .memberKicked, by: s,
                                audit: try self.audit(.memberKicked, r.serverID, by: s, target: r.userID, reason: r.reason))
        }
    }

    /// A member left or was removed: their sessions stop hearing the server once it is stored.
    private func removed(_ decision: DirectoryDecision<MemberRecord>, kind: GHNotificationKind, by s: HomeSession, audit: [StoreWrite]) -> Effects {
        let member = decision.value
        return effects(decision, also: audit, reply: .ok,
                       notices: [Notice(kind, .server(member.serverID, isPublic: false), actor: s.user, targeted: [member.userID]) { $0.member = GHMember(member) }])
    }

    // MARK: Channels

    func createChannel(_ r: GHCreateChannel, id: UInt64, from s: HomeSession) {
        change(r.serverID, id: id, from: s) { () throws(Failure) in
            if r.guestVisibility != .followServer { try self.services.requirePermission(.manageGuests, at: .server(r.serverID), for: s) }
            let now = self.now()
            let decision = try self.directory.decide.createChannel(
                ChannelRecord(id: self.services.newID(now: now, shard: ShardPlan.shard(guild: r.serverID, shards: self.settings.shards)), serverID: r.serverID,
                              name: r.name, topic: r.topic, custom: r.custom, createdAt: now,
                              guestVisibility: GuestVisibility(rawValue: r.guestVisibility.rawValue) ?? .followServer),
                by: s.user)
            let record = decision.value
            let audit = try self.audit(.channelCreated, r.serverID, by: s, target: "\(record.id)", channel: record.id,
                                       changes: AuditDiff.channel(nil, record), reason: r.reason)
            return self.channelChanged(.channelCreated, decision, from: s, audit: audit)
        }
    }

    func updateChannel(_ r: GHUpdateChannel, id: UInt64, from s: HomeSession) {
        change(directory.serverID(ofChannel: r.channelID), id: id, from: s) { () throws(Failure) in
            if r.hasGuestVisibility { try self.services.requirePermission(.manageGuests, at: .channel(r.channelID), for: s) }
            let before = self.directory.channel(r.channelID)
            let decision = try self.directory.decide.updateChannel(r.channelID, by: s.user, name: r.hasName ? r.name : nil,
                                                            topic: r.hasTopic ? r.topic : nil, custom: r.hasCustom ? r.custom : nil,
                                                            guestVisibility: r.hasGuestVisibility ? GuestVisibility(rawValue: r.guestVisibility.rawValue) : nil,
                                                            slowModeSeconds: r.hasSlowModeSeconds ? r.slowModeSeconds : nil)
            let c = decision.value
            let audit = try self.audit(.channelUpdated, c.serverID, by: s, target: "\(c.id)", channel: c.id, changes: AuditDiff.channel(before, c),
                                       onlyIfChanged: true, reason: r.reason)
            return self.channelChanged(.channelUpdated, decision, from: s, audit: audit)
        }
    }

    func deleteChannel(_ r: GHDeleteChannel, id: UInt64, from s: HomeSession) {
        change(directory.serverID(ofChannel: r.channelID), id: id, from: s) { () throws(Failure) in
            let decision = try self.directory.decide.deleteChannel(r.channelID, by: s.user)
            let channel = decision.value.id
            let audit = try self.audit(.channelDeleted, decision.value.serverID, by: s, target: "\(channel)", channel: channel,
                                       changes: AuditDiff.channel(decision.value, nil), reason: r.reason)
            return self.channelChanged(.channelDeleted, decision, from: s, answerOK: true, audit: audit)
        }
    }

    private func channelChanged(_ kind: GHNotificationKind, _ decision: DirectoryDecision<ChannelRecord>, from s: HomeSession,
                                answerOK: Bool = false, audit: [StoreWrite]) -> Effects {
        let record = decision.value
        var followUps: [FollowUp] = kind == .channelDeleted ? [.channelGone(record.id)] : []
        if kind != .channelUpdated { followUps.append(.channelsChanged(record.serverID)) }
        followUps.append(.guestsRecheck(record.serverID))
        // Subscribers hear of a deleted channel (notices go before the follow-ups) before their subscriptions go.
        return effects(decision, also: audit, reply: answerOK ? .ok : .read(.channel(record)),
                       notices: [Notice(kind, .channel(record, isPublic: true), actor: s.user)], followUps: followUps)
    }

    func listChannels(_ r: GHListChannels, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            var list = GHChannelList()
            list.channels = try directory.seen(by: s.user).channels(of: r.serverID).map(GHChannelInfo.init)
            s.respond(id, .channels(list))
        }
    }
}
