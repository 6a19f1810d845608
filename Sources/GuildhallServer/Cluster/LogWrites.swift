// Each kind of store write as its field-numbered log message (Proto/log.proto)
// and back. Field numbers, not names, are the format: renaming a case or a
// property here cannot make a log unreadable, and `LogFormatTests` decodes
// committed entries of every kind to keep it so. Pure.

import Foundation
import GuildhallCore
import GuildhallStore
import GuildhallWire

extension GHLogWrite {
    init(_ w: StoreWrite) {
        self.init()
        switch w {
        case .message(let m): message = GHLogMessage(m)
        case .directory(let c): directory = GHLogDirectory(c)
        case .readPosition(let user, let channel, let p):
            readPosition = .with {
                $0.user = user; $0.channelID = channel
                $0.readSeq = p.readSeq; $0.ackTime = p.ackTime; $0.activity = p.activity
            }
        case .inbox(let r):
            inbox = .with { $0.ord = r.ord; $0.user = r.user; $0.at = r.at; $0.messageUid = r.messageUID; $0.event = Data(r.event) }
        case .syncCursor(let user, let device, let ord): syncCursor = .with { $0.user = user; $0.device = device; $0.ord = ord }
        case .receivedStatus(let user, let uid, let flags):
            receivedStatus = .with { $0.user = user; $0.messageUid = uid; $0.flags = flags.rawValue }
        case .pruneInbox(let before): pruneInbox = .with { $0.before = before }
        case .receiptRequest(let channel, let r):
            receiptRequest = .with {
                $0.channelID = channel; $0.messageUid = r.uid; $0.seq = r.seq; $0.requester = r.requester; $0.sentTime = r.sentTime
            }
        case .receiptAdvance(let channel, let a):
            receiptAdvance = .with { $0.channelID = channel; $0.user = a.user; $0.from = a.from; $0.to = a.to; $0.time = a.time }
        case .conversation(let id, let users, let createdAt): conversation = .with { $0.id = id; $0.users = users; $0.createdAt = createdAt }
        case .group(let g):
            conversation = .with {
                $0.id = g.id; $0.users = g.members; $0.createdAt = g.createdAt
                $0.isGroup = true; $0.name = g.name; $0.owner = g.owner; $0.membersMayAdd = g.membersMayAdd
            }
        case .directSide(let conversation, let s):
            directSide = .with {
                $0.conversation = conversation; $0.user = s.user; $0.sentCount = s.sentCount; $0.deliveredSeq = s.deliveredSeq
                $0.readTime = s.readTime; $0.readCount = s.readCount; $0.readSingly = s.readSingly
            }
        case .directRead(let conversation, let reader, let uid, let sentTime):
            directRead = .with { $0.conversation = conversation; $0.reader = reader; $0.messageUid = uid; $0.sentTime = sentTime }
        case .receivedSeq(let user, let channel, let seq): receivedSeq = .with { $0.user = user; $0.channelID = channel; $0.seq = seq }
        case .messageEdited(let uid, let content, let time, let channel):
            messageEdited = .with {
                $0.messageUid = uid; $0.time = time; $0.channelID = channel
                switch content {
                case .text(let t): $0.text = t
                case .custom(let type, let data): $0.custom = .with { $0.type = type; $0.data = Data(data) }
                }
            }
        case .messageRemoved(let uid, let removal, let channel):
            messageRemoved = .with { $0.messageUid = uid; $0.removal = GHLogRemoval(removal); $0.channelID = channel }
        case .threadReply(let root, let time, let channel): threadReply = .with { $0.root = root; $0.time = time; $0.channelID = channel }
        case .logPosition(let shard, let seq): logPosition = .with { $0.shard = UInt32(shard); $0.seq = seq }
        case .reaction(let uid, let user, let type, let added, let time, let channel):
            reaction = .with {
                $0.messageUid = uid; $0.user = user; $0.type = type; $0.added = added; $0.time = time; $0.channelID = channel
            }
        case .fileCreated(let f):
            fileCreated = .with {
                $0.id = f.id; $0.uploader = f.uploader; $0.serverID = f.serverID; $0.channelID = f.channelID; $0.filename = f.filename
                $0.contentType = f.contentType; $0.size = f.size; $0.sha256 = f.sha256; $0.createdAt = f.createdAt
            }
        case .fileSwept(let id, let server, let channel):
            fileSwept = .with { $0.id = id; $0.serverID = server; $0.channelID = channel }
        case .pinned(let p):
            pinned = .with { $0.channelID = p.channelID; $0.messageUid = p.messageUID; $0.pinnedBy = p.pinnedBy; $0.pinnedAt = p.pinnedAt }
        case .unpinned(let channel, let uid): unpinned = .with { $0.channelID = channel; $0.messageUid = uid }
        case .presence(let user, let choice, let lastSeen):
            presence = .with { $0.user = user; $0.status = UInt32(choice.status.rawValue); $0.text = choice.text; $0.lastSeen = lastSeen }
        case .audited(let e):
            audited = .with {
                $0.id = e.id; $0.serverID = e.serverID; $0.actor = e.actor; $0.action = e.action.rawValue; $0.target = e.target
                $0.channelID = e.channelID; $0.reason = e.reason; $0.time = e.time
                $0.changes = e.changes.map { c in .with { $0.key = c.key; $0.before = c.before; $0.after = c.after } }
            }
        case .pruneAuditLog(let before): pruneAuditLog = .with { $0.before = before }
        case .pushRegistered(let r):
            pushRegistered = .with {
                $0.user = r.user; $0.device = r.device; $0.platform = r.platform; $0.token = r.token; $0.previews = r.previews; $0.updatedAt = r.updatedAt
            }
        case .pushUnregistered(let user, let device): pushUnregistered = .with { $0.user = user; $0.device = device }
        case .directBlock(let blocker, let blocked, let blocks): directBlock = .with { $0.blocker = blocker; $0.blocked = blocked; $0.blocks = blocks }
        case .directPrivacy(let user, let only): directPrivacy = .with { $0.user = user; $0.serverMatesOnly = only }
        case .webhookSaved(let w):
            webhookSaved = .with {
                $0.id = w.id; $0.serverID = w.serverID; $0.channelID = w.channelID; $0.name = w.name; $0.secretHash = w.secretHash
                $0.createdBy = w.createdBy; $0.createdAt = w.createdAt
            }
        case .webhookDeleted(let id, let server): webhookDeleted = .with { $0.id = id; $0.serverID = server }
        case .profile(let p): profile = .with { $0.user = p.user; $0.displayName = p.displayName; $0.avatar = p.avatar; $0.updatedAt = p.updatedAt }
        }
    }

    /// The write it holds; `other` is the JSON older versions appended.
    func storeWrite() throws -> StoreWrite {
        switch write {
        case .message(let m): return .message(try m.record())
        case .directory(let d): return .directory(try d.change())
        case .readPosition(let p): return .readPosition(p.user, p.channelID, ReadPosition(readSeq: p.readSeq, ackTime: p.ackTime, activity: p.activity))
        case .inbox(let r): return .inbox(InboxRow(ord: r.ord, user: r.user, at: r.at, messageUID: r.messageUid, event: [UInt8](r.event)))
        case .syncCursor(let c): return .syncCursor(c.user, c.device, c.ord)
        case .receivedStatus(let r): return .receivedStatus(r.user, r.messageUid, ReceivedFlags(rawValue: r.flags))
        case .pruneInbox(let p): return .pruneInbox(before: p.before)
        case .receiptRequest(let r):
            return .receiptRequest(r.channelID, ChannelReceipts.Request(uid: r.messageUid, seq: r.seq, requester: r.requester, sentTime: r.sentTime))
        case .receiptAdvance(let a): return .receiptAdvance(a.channelID, ChannelReceipts.Advance(user: a.user, from: a.from, to: a.to, time: a.time))
        case .conversation(let c) where c.isGroup:
            return .group(GroupRow(id: c.id, name: c.name, owner: c.owner, membersMayAdd: c.membersMayAdd, members: c.users, createdAt: c.createdAt))
        case .conversation(let c): return .conversation(id: c.id, users: c.users, createdAt: c.createdAt)
        case .directSide(let d):
            var side = DirectConversation.Side(user: d.user)
            side.sentCount = d.sentCount
            side.deliveredSeq = d.deliveredSeq
            side.readTime = d.readTime
            side.readCount = d.readCount
            side.readSingly = d.readSingly
            return .directSide(conversation: d.conversation, side)
        case .directRead(let r): return .directRead(conversation: r.conversation, reader: r.reader, uid: r.messageUid, sentTime: r.sentTime)
        case .receivedSeq(let r): return .receivedSeq(r.user, r.channelID, r.seq)
        case .messageEdited(let e):
            let content: MessageContent = switch e.content {
            case .custom(let c): .custom(type: c.type, data: [UInt8](c.data))
            case .text(let t): .text(t)
            case nil: .text("")
            }
            return .messageEdited(e.messageUid, content, time: e.time, channel: e.channelID)
        case .messageRemoved(let r): return .messageRemoved(r.messageUid, try r.removal.value(), channel: r.channelID)
        case .threadReply(let t): return .threadReply(root: t.root, time: t.time, channel: t.channelID)
        case .logPosition(let p): return .logPosition(shard: Int(p.shard), seq: p.seq)
        case .reaction(let r):
            return .reaction(r.messageUid, user: r.user, type: r.type, added: r.added, time: r.time, channel: r.channelID)
        case .fileCreated(let f):
            return .fileCreated(FileRecord(id: f.id, uploader: f.uploader, serverID: f.serverID, channelID: f.channelID, filename: f.filename,
                                           contentType: f.contentType, size: f.size, sha256: f.sha256, createdAt: f.createdAt))
        case .fileSwept(let f): return .fileSwept(f.id, serverID: f.serverID, channelID: f.channelID)
        case .pinned(let p): return .pinned(PinRecord(channelID: p.channelID, messageUID: p.messageUid, pinnedBy: p.pinnedBy, pinnedAt: p.pinnedAt))
        case .unpinned(let u): return .unpinned(u.channelID, u.messageUid)
        case .presence(let p):
            return .presence(p.user, PresenceChoice(status: PresenceStatus(rawValue: Int(p.status)) ?? .online, text: p.text), lastSeen: p.lastSeen)
        case .pruneAuditLog(let p): return .pruneAuditLog(before: p.before)
        case .pushRegistered(let r):
            return .pushRegistered(PushRegistration(user: r.user, device: r.device, platform: r.platform, token: r.token, previews: r.previews,
                                                    updatedAt: r.updatedAt))
        case .pushUnregistered(let u): return .pushUnregistered(u.user, u.device)
        case .directBlock(let b): return .directBlock(blocker: b.blocker, blocked: b.blocked, blocks: b.blocks)
        case .directPrivacy(let p): return .directPrivacy(p.user, serverMatesOnly: p.serverMatesOnly)
        case .webhookSaved(let w):
            return .webhookSaved(WebhookRecord(id: w.id, serverID: w.serverID, channelID: w.channelID, name: w.name, secretHash: w.secretHash,
                                               createdBy: w.createdBy, createdAt: w.createdAt))
        case .webhookDeleted(let d): return .webhookDeleted(id: d.id, serverID: d.serverID)
        case .profile(let p): return .profile(UserProfile(user: p.user, displayName: p.displayName, avatar: p.avatar, updatedAt: p.updatedAt))
        case .audited(let e):
            guard let action = AuditAction(rawValue: e.action) else { throw LogFormatError("audit action \(e.action) is unknown") }
            return .audited(AuditEntry(id: e.id, serverID: e.serverID, actor: e.actor, action: action, target: e.target, channelID: e.channelID,
                                       changes: e.changes.map { AuditChange(key: $0.key, before: $0.before, after: $0.after) },
                                       reason: e.reason, time: e.time))
        case .other(let json): return try JSONDecoder().decode(StoreWrite.self, from: json)
        case nil: throw LogFormatError("a log write holds nothing")
        }
    }
}

/// A log entry this version cannot read.
struct LogFormatError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension GHLogDirectory {
    init(_ c: DirectoryChange) {
        self.init()
        switch c {
        case .serverSaved(let s):
            serverSaved = .with {
                $0.id = s.id; $0.name = s.name; $0.icon = s.icon; $0.custom = s.custom; $0.owner = s.owner
                $0.openJoin = s.openJoin; $0.createdAt = s.createdAt; $0.allowGuests = s.allowGuests
                $0.discoverable = s.discoverable
            }
        case .serverDeleted(let id): serverDeleted = id
        case .memberSaved(let m):
            memberSaved = .with {
                $0.serverID = m.serverID; $0.user = m.userID; $0.isOwner = m.isOwner; $0.roles = m.roles; $0.joinedAt = m.joinedAt
                $0.nickname = m.nickname; $0.displayName = m.displayName; $0.avatar = m.avatar
            }
        case .memberRemoved(let server, let user): memberRemoved = GHLogServerUser(server, user)
        case .inviteSaved(let i):
            inviteSaved = .with { $0.serverID = i.serverID; $0.user = i.userID; $0.inviter = i.inviter; $0.createdAt = i.createdAt }
        case .inviteRemoved(let server, let user): inviteRemoved = GHLogServerUser(server, user)
        case .channelSaved(let ch): channelSaved = GHLogChannel(ch)
        case .channelDeleted(let id): channelDeleted = id
        case .banSaved(let b):
            banSaved = .with { $0.serverID = b.serverID; $0.user = b.userID; $0.actor = b.actor; $0.createdAt = b.createdAt; $0.expiresAt = b.expiresAt }
        case .banRemoved(let server, let user): banRemoved = GHLogServerUser(server, user)
        case .roleSaved(let r):
            roleSaved = .with {
                $0.serverID = r.serverID; $0.id = r.id; $0.name = r.name; $0.position = r.position
                $0.permissions = GHLogBits(r.permissions); $0.createdAt = r.createdAt
            }
        case .roleDeleted(let server, let role): roleDeleted = .with { $0.serverID = server; $0.roleID = role }
        case .overrideSaved(let o):
            overrideSaved = .with {
                $0.serverID = o.serverID; $0.channelID = o.channelID; $0.permissions = GHLogBits(o.permissions)
                switch o.target {
                case .role(let id): $0.roleID = id
                case .member(let user): $0.member = user
                }
            }
        case .inviteCodeSaved(let c):
            inviteCodeSaved = .with {
                $0.code = c.code; $0.serverID = c.serverID; $0.channelID = c.channelID; $0.creator = c.creator
                $0.createdAt = c.createdAt; $0.expiresAt = c.expiresAt; $0.maxUses = c.maxUses; $0.uses = c.uses
            }
        case .inviteCodeRemoved(let server, let code): inviteCodeRemoved = .with { $0.serverID = server; $0.code = code }
        case .timeoutSaved(let t): timeoutSaved = .with { $0.serverID = t.serverID; $0.user = t.userID; $0.until = t.until; $0.actor = t.actor }
        case .timeoutRemoved(let server, let user): timeoutRemoved = GHLogServerUser(server, user)
        }
    }

    func change() throws -> DirectoryChange {
        switch change {
        case .serverSaved(let s):
            return .serverSaved(ServerRecord(id: s.id, name: s.name, icon: s.icon, custom: s.custom, owner: s.owner, openJoin: s.openJoin,
                                             createdAt: s.createdAt, allowGuests: s.allowGuests, discoverable: s.discoverable))
        case .serverDeleted(let id): return .serverDeleted(id)
        case .memberSaved(let m):
            var member = MemberRecord(serverID: m.serverID, userID: m.user, role: .member, joinedAt: m.joinedAt, roles: m.roles)
            member.isOwner = m.isOwner
            (member.nickname, member.displayName, member.avatar) = (m.nickname, m.displayName, m.avatar)
            return .memberSaved(member)
        case .memberRemoved(let r): return .memberRemoved(r.serverID, r.user)
        case .inviteSaved(let i): return .inviteSaved(InviteRecord(serverID: i.serverID, userID: i.user, inviter: i.inviter, createdAt: i.createdAt))
        case .inviteRemoved(let r): return .inviteRemoved(r.serverID, r.user)
        case .channelSaved(let c): return .channelSaved(try c.value())
        case .channelDeleted(let id): return .channelDeleted(id)
        case .banSaved(let b):
            return .banSaved(BanRecord(serverID: b.serverID, userID: b.user, actor: b.actor, createdAt: b.createdAt, expiresAt: b.expiresAt))
        case .banRemoved(let r): return .banRemoved(r.serverID, r.user)
        case .roleSaved(let r):
            return .roleSaved(RoleRecord(serverID: r.serverID, id: r.id, name: r.name, position: r.position,
                                         permissions: r.permissions.value, createdAt: r.createdAt))
        case .roleDeleted(let r): return .roleDeleted(r.serverID, r.roleID)
        case .overrideSaved(let o):
            let target: OverrideTarget
            switch o.target {
            case .roleID(let id): target = .role(id)
            case .member(let user): target = .member(user)
            case nil: throw LogFormatError("a channel override names no role or member")
            }
            return .overrideSaved(OverrideRecord(serverID: o.serverID, channelID: o.channelID, target: target, permissions: o.permissions.value))
        case .inviteCodeSaved(let c):
            return .inviteCodeSaved(InviteCode(code: c.code, serverID: c.serverID, channelID: c.channelID, creator: c.creator, createdAt: c.createdAt,
                                               expiresAt: c.expiresAt, maxUses: c.maxUses, uses: c.uses))
        case .inviteCodeRemoved(let r): return .inviteCodeRemoved(r.serverID, r.code)
        case .timeoutSaved(let t): return .timeoutSaved(TimeoutRecord(serverID: t.serverID, userID: t.user, until: t.until, actor: t.actor))
        case .timeoutRemoved(let r): return .timeoutRemoved(r.serverID, r.user)
        case nil: throw LogFormatError("a directory write holds nothing")
        }
    }
}

extension GHLogChannel {
    init(_ ch: ChannelRecord) {
        self.init()
        id = ch.id
        serverID = ch.serverID
        name = ch.name
        topic = ch.topic
        custom = ch.custom
        createdAt = ch.createdAt
        guestVisibility = UInt32(ch.guestVisibility.rawValue)
        lastSeq = ch.lastSeq
        lastMessageTime = ch.lastMessageTime
        removedSeqs = ch.removed.seqs
        slowModeSeconds = ch.slowModeSeconds
    }

    func value() throws -> ChannelRecord {
        guard let visibility = GuestVisibility(rawValue: Int(guestVisibility)) else {
            throw LogFormatError("guest visibility \(guestVisibility) is not known")
        }
        var channel = ChannelRecord(id: id, serverID: serverID, name: name, topic: topic, custom: custom, createdAt: createdAt,
                                    guestVisibility: visibility)
        channel.lastSeq = lastSeq
        channel.lastMessageTime = lastMessageTime
        channel.removed = RemovedSeqs(removedSeqs)
        channel.slowModeSeconds = slowModeSeconds
        return channel
    }
}

extension GHLogServerUser {
    init(_ server: ServerID, _ user: UserID) {
        self.init()
        serverID = server
        self.user = user
    }
}

extension GHLogBits {
    init(_ p: PermissionOverride) {
        self.init()
        allow = p.allow.rawValue
        deny = p.deny.rawValue
    }

    var value: PermissionOverride { PermissionOverride(allow: Permission(rawValue: allow), deny: Permission(rawValue: deny)) }
}

extension GHLogRemoval {
    init(_ r: Removal) {
        self.init()
        kind = UInt32(r.kind.rawValue)
        by = r.by
        time = r.time
    }

    func value() throws -> Removal {
        guard let k = RemovalKind(rawValue: Int(kind)) else { throw LogFormatError("removal kind \(kind) is not known") }
        return Removal(kind: k, by: by, time: time)
    }
}

extension GHLogChanges {
    init(_ c: MessageChanges) {
        self.init()
        editedTime = c.editedTime
        editCount = c.editCount
        if let r = c.removal { removal = GHLogRemoval(r) }
        threadReplies = c.threadReplies
        threadLastReply = c.threadLastReply
        reactions = c.reactions.map { r in .with { $0.type = r.type; $0.count = r.count; $0.mine = r.mine } }
    }

    func value() throws -> MessageChanges {
        var c = MessageChanges()
        c.editedTime = editedTime
        c.editCount = editCount
        c.removal = hasRemoval ? try removal.value() : nil
        c.threadReplies = threadReplies
        c.threadLastReply = threadLastReply
        c.reactions = reactions.map { ReactionCount(type: $0.type, count: $0.count, mine: $0.mine) }
        return c
    }
}
