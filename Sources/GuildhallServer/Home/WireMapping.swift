// Domain records to wire messages and back. The only place that knows both.

import GuildhallCore
import GuildhallWire

extension GHServerInfo {
    init(_ r: ServerRecord, memberCount: Int) {
        self.init()
        serverID = r.id; name = r.name; icon = r.icon; custom = r.custom
        ownerID = r.owner; openJoin = r.openJoin; self.memberCount = UInt32(memberCount); createdAt = r.createdAt
        allowGuests = r.allowGuests
        discoverable = r.discoverable
    }
}

extension GHChannelInfo {
    init(_ r: ChannelRecord) {
        self.init()
        channelID = r.id; serverID = r.serverID; name = r.name; topic = r.topic; custom = r.custom
        lastSeq = r.lastSeq; lastMessageTime = r.lastMessageTime; createdAt = r.createdAt
        guestVisibility = GHGuestVisibility(rawValue: r.guestVisibility.rawValue) ?? .followServer
        slowModeSeconds = r.slowModeSeconds
    }
}

extension GHMember {
    init(_ r: MemberRecord) {
        self.init()
        serverID = r.serverID; userID = r.userID; role = GHRole(r.role); joinedAt = r.joinedAt; roleIds = r.roles
        nickname = r.nickname; displayName = r.displayName; avatar = r.avatar
    }
}

extension GHPermissionBits {
    init(_ o: PermissionOverride) {
        self.init()
        allow = o.allow.rawValue; deny = o.deny.rawValue
    }

    var domain: PermissionOverride { PermissionOverride(allow: Permission(rawValue: allow), deny: Permission(rawValue: deny)) }
}

extension GHRoleInfo {
    init(_ r: RoleRecord) {
        self.init()
        serverID = r.serverID; roleID = r.id; name = r.name; position = r.position; permissions = GHPermissionBits(r.permissions)
        createdAt = r.createdAt
    }
}

extension GHPermissionOverride {
    init(_ o: OverrideRecord) {
        self.init()
        serverID = o.serverID; channelID = o.channelID; permissions = GHPermissionBits(o.permissions)
        switch o.target {
        case .role(let id): roleID = id
        case .member(let user): userID = user
        }
    }

    var domain: OverrideRecord {
        get throws(Failure) {
            let target: OverrideTarget = switch self.target {
            case .roleID(let id)?: .role(id)
            case .userID(let user)?: .member(user)
            case nil: throw Failure.badRequest("override: name a role_id or a user_id")
            }
            return OverrideRecord(serverID: serverID, channelID: channelID, target: target, permissions: permissions.domain)
        }
    }
}

extension GHRole {
    init(_ r: Role) {
        switch r {
        case .member: self = .member
        case .admin: self = .admin
        case .owner: self = .owner
        }
    }

    var domain: Role? {
        switch self {
        case .member: .member
        case .admin: .admin
        case .owner: .owner
        default: nil
        }
    }
}

extension GHChannelMessage {
    init(_ r: MessageRecord) {
        self.init()
        uid = r.uid; serverID = r.serverID; channelID = r.channelID; seq = r.seq; senderID = r.sender
        sentTime = r.sentTime; body = GHMessageBody(r.content); mentions = r.mentions; mentionAll = r.mentionAll
        needReceipt = r.needReceipt; clientID = r.clientID
        if r.needReceipt {
            receipt.messageUid = r.uid
            receipt.requested = true
        }
        if let reply = r.reply {
            replyTo.messageUid = reply.uid
            replyTo.senderID = reply.sender
            replyTo.excerpt = reply.excerpt
        }
        threadRoot = r.threadRoot
        if let w = r.webhook {
            webhook.webhookID = w.webhookID
            webhook.name = w.name
            webhook.avatar = w.avatar
        }
        let c = r.changes
        threadReplyCount = c.threadReplies
        threadLastReplyTime = c.threadLastReply
        editedTime = c.editedTime
        editCount = c.editCount
        if let removal = c.removal {
            self.removal.kind = GHRemovalKind(rawValue: removal.kind.rawValue) ?? .unspecified
            self.removal.by = removal.by
            self.removal.time = removal.time
        }
        reactions = c.reactions.map { rc in
            var g = GHReactionCount()
            g.type = rc.type
            g.count = rc.count
            g.mine = rc.mine
            return g
        }
    }
}

extension GHMessageBody {
    init(_ c: MessageContent) {
        self.init()
        switch c {
        case .text(let t): text = t
        case .custom(let type, let data):
            var custom = GHCustomBody()
            custom.type = type
            custom.data = .init(data)
            self.custom = custom
        }
    }

    /// The domain content, or a 400 when no content is set.
    func domain() throws(Failure) -> MessageContent {
        switch content {
        case .text(let t): return .text(t)
        case .custom(let c): return .custom(type: c.type, data: Array(c.data))
        case nil: throw Failure.badRequest("message body must hold text or custom content")
        }
    }
}

extension GHError {
    init(_ f: Failure) {
        self.init()
        code = GHErrorCode(rawValue: f.code.rawValue) ?? .internal
        message = f.message
        retryAfterMs = f.retryAfterMs
    }
}
