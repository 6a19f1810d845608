// The stored shape of servers, channels, members, invitations and messages.
// Plain Sendable values: the loop keeps them in the Directory, the store
// writes and reads them, the server maps them onto the wire.

import Foundation

public struct ServerRecord: Sendable, Codable, Equatable {
    public var id: ServerID
    public var name: String
    public var icon: String
    public var custom: String
    public var owner: UserID
    public var openJoin: Bool
    public var createdAt: UInt64
    /// Whether non-members may enter as guests.
    public var allowGuests: Bool
    /// Whether it is listed in the server directory.
    public var discoverable: Bool

    public init(id: ServerID, name: String, icon: String, custom: String, owner: UserID, openJoin: Bool, createdAt: UInt64,
                allowGuests: Bool = false, discoverable: Bool = false) {
        self.id = id; self.name = name; self.icon = icon; self.custom = custom
        self.owner = owner; self.openJoin = openJoin; self.createdAt = createdAt; self.allowGuests = allowGuests; self.discoverable = discoverable
    }

    private enum CodingKeys: String, CodingKey { case id, name, icon, custom, owner, openJoin, createdAt, allowGuests, discoverable }

    /// As written (older log entries have no `discoverable`: not listed).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try c.decode(ServerID.self, forKey: .id), name: try c.decode(String.self, forKey: .name),
                  icon: try c.decode(String.self, forKey: .icon), custom: try c.decode(String.self, forKey: .custom),
                  owner: try c.decode(UserID.self, forKey: .owner), openJoin: try c.decode(Bool.self, forKey: .openJoin),
                  createdAt: try c.decode(UInt64.self, forKey: .createdAt), allowGuests: try c.decode(Bool.self, forKey: .allowGuests),
                  discoverable: try c.decodeIfPresent(Bool.self, forKey: .discoverable) ?? false)
    }
}

/// Whether guests see a channel.
public enum GuestVisibility: Int, Sendable, Codable, Equatable {
    /// Visible exactly when the server allows guests.
    case followServer = 0
    case visible = 1
    case invisible = 2
}

public struct ChannelRecord: Sendable, Codable, Equatable {
    public var id: ChannelID
    public var serverID: ServerID
    public var name: String
    public var topic: String
    public var custom: String
    public var createdAt: UInt64
    public var guestVisibility: GuestVisibility
    /// Seq of the newest message; derived from the messages on load, never stored here.
    public var lastSeq: UInt64 = 0
    /// Sent time of the newest message.
    public var lastMessageTime: UInt64 = 0
    /// Seqs recalled or deleted, which unread counts leave out.
    public var removed = RemovedSeqs()
    /// Seconds a member waits between messages here (Moderation.swift); 0: off.
    public var slowModeSeconds: UInt32 = 0

    public init(id: ChannelID, serverID: ServerID, name: String, topic: String, custom: String, createdAt: UInt64,
                guestVisibility: GuestVisibility = .followServer, slowModeSeconds: UInt32 = 0) {
        self.id = id; self.serverID = serverID; self.name = name; self.topic = topic
        self.custom = custom; self.createdAt = createdAt; self.guestVisibility = guestVisibility; self.slowModeSeconds = slowModeSeconds
    }

    private enum CodingKeys: String, CodingKey {
        case id, serverID, name, topic, custom, createdAt, guestVisibility, lastSeq, lastMessageTime, removed, slowModeSeconds
    }

    /// Older log entries' JSON has no slow mode: it was off.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try c.decode(ChannelID.self, forKey: .id), serverID: try c.decode(ServerID.self, forKey: .serverID),
                  name: try c.decode(String.self, forKey: .name), topic: try c.decode(String.self, forKey: .topic),
                  custom: try c.decode(String.self, forKey: .custom), createdAt: try c.decode(UInt64.self, forKey: .createdAt),
                  guestVisibility: try c.decode(GuestVisibility.self, forKey: .guestVisibility),
                  slowModeSeconds: try c.decodeIfPresent(UInt32.self, forKey: .slowModeSeconds) ?? 0)
        lastSeq = try c.decode(UInt64.self, forKey: .lastSeq)
        lastMessageTime = try c.decode(UInt64.self, forKey: .lastMessageTime)
        removed = try c.decode(RemovedSeqs.self, forKey: .removed)
    }
}

public struct MemberRecord: Sendable, Codable, Equatable {
    public var serverID: ServerID
    public var userID: UserID
    public var isOwner: Bool
    /// The roles the member holds besides `everyone`, ascending.
    public var roles: [RoleID]
    public var joinedAt: UInt64
    /// The member's name in this server, or "" (Profiles.swift).
    public var nickname = ""
    /// Copies of the user's profile, kept in step by the user's home's word.
    public var displayName = ""
    public var avatar = ""

    /// `role` .admin means holding the `admin` role.
    public init(serverID: ServerID, userID: UserID, role: Role, joinedAt: UInt64, roles: [RoleID] = []) {
        self.serverID = serverID; self.userID = userID; self.isOwner = role == .owner; self.joinedAt = joinedAt
        self.roles = role == .admin && !roles.contains(.admin) ? (roles + [.admin]).sorted() : roles
    }

    /// Owner; admin when holding the `admin` role; member otherwise.
    public var role: Role { isOwner ? .owner : roles.contains(.admin) ? .admin : .member }

    private enum CodingKeys: String, CodingKey {
        case serverID, userID, isOwner, roles, joinedAt, nickname, displayName, avatar
    }

    /// Older log entries' JSON has no names: none were set.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        serverID = try c.decode(ServerID.self, forKey: .serverID)
        userID = try c.decode(UserID.self, forKey: .userID)
        isOwner = try c.decode(Bool.self, forKey: .isOwner)
        roles = try c.decode([RoleID].self, forKey: .roles)
        joinedAt = try c.decode(UInt64.self, forKey: .joinedAt)
        nickname = try c.decodeIfPresent(String.self, forKey: .nickname) ?? ""
        displayName = try c.decodeIfPresent(String.self, forKey: .displayName) ?? ""
        avatar = try c.decodeIfPresent(String.self, forKey: .avatar) ?? ""
    }
}

public struct InviteRecord: Sendable, Codable, Equatable {
    public var serverID: ServerID
    public var userID: UserID
    public var inviter: UserID
    public var createdAt: UInt64

    public init(serverID: ServerID, userID: UserID, inviter: UserID, createdAt: UInt64) {
        self.serverID = serverID; self.userID = userID; self.inviter = inviter; self.createdAt = createdAt
    }
}

public struct BanRecord: Sendable, Codable, Equatable {
    public var serverID: ServerID
    public var userID: UserID
    public var actor: UserID
    public var createdAt: UInt64
    /// When the ban ends by itself (Moderation.swift); 0: until lifted.
    public var expiresAt: UInt64 = 0

    public init(serverID: ServerID, userID: UserID, actor: UserID, createdAt: UInt64, expiresAt: UInt64 = 0) {
        self.serverID = serverID; self.userID = userID; self.actor = actor; self.createdAt = createdAt; self.expiresAt = expiresAt
    }

    private enum CodingKeys: String, CodingKey { case serverID, userID, actor, createdAt, expiresAt }

    /// Older log entries' JSON has no end: the ban lasted until lifted.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(serverID: try c.decode(ServerID.self, forKey: .serverID), userID: try c.decode(UserID.self, forKey: .userID),
                  actor: try c.decode(UserID.self, forKey: .actor), createdAt: try c.decode(UInt64.self, forKey: .createdAt),
                  expiresAt: try c.decodeIfPresent(UInt64.self, forKey: .expiresAt) ?? 0)
    }
}

/// What a message holds: text, or an application-defined type with opaque bytes.
public enum MessageContent: Sendable, Codable, Equatable {
    case text(String)
    case custom(type: String, data: [UInt8])

    /// Bytes counted against the body limit.
    public var size: Int {
        switch self {
        case .text(let t): t.utf8.count
        case .custom(let type, let data): type.utf8.count + data.count
        }
    }

    // Written by hand so that opaque bytes are one Data value (base64 in a
    // cluster's JSON log entries), not an array of numbers: the derived form
    // made encoding most of a clustered send's cost.
    private enum Keys: String, CodingKey { case text, type, data }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        if let text = try c.decodeIfPresent(String.self, forKey: .text) {
            self = .text(text)
        } else {
            self = .custom(type: try c.decode(String.self, forKey: .type), data: [UInt8](try c.decode(Data.self, forKey: .data)))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        switch self {
        case .text(let t): try c.encode(t, forKey: .text)
        case .custom(let type, let data):
            try c.encode(type, forKey: .type)
            try c.encode(Data(data), forKey: .data)
        }
    }
}

public struct MessageRecord: Sendable, Codable, Equatable {
    public var uid: MessageUID
    public var serverID: ServerID
    public var channelID: ChannelID
    public var seq: UInt64
    public var sender: UserID
    public var sentTime: UInt64
    public var content: MessageContent
    public var mentions: [UserID]
    public var mentionAll: Bool
    public var needReceipt: Bool
    public var clientID: String
    /// The message this one replies to, if any.
    public var reply: ReplyRef?
    /// The thread this one belongs to (its root's UID), or 0.
    public var threadRoot: MessageUID = 0
    /// What happened to it since (as stored; reactions as one viewer sees them).
    public var changes = MessageChanges()
    /// The files it carries, in the order sent.
    public var attachments: [FileAttachment] = []
    /// A direct message whose recipient blocked its sender: stored for the sender, never shown to the recipient.
    public var withheld = false
    /// Posted through a webhook (Webhooks.swift): who it shows as.
    public var webhook: WebhookAuthor?

    public init(uid: MessageUID, serverID: ServerID, channelID: ChannelID, seq: UInt64, sender: UserID, sentTime: UInt64,
                content: MessageContent, mentions: [UserID], mentionAll: Bool, needReceipt: Bool, clientID: String) {
        self.uid = uid; self.serverID = serverID; self.channelID = channelID; self.seq = seq
        self.sender = sender; self.sentTime = sentTime; self.content = content; self.mentions = mentions
        self.mentionAll = mentionAll; self.needReceipt = needReceipt; self.clientID = clientID
    }

    /// What later versions added may be missing from JSON written before them (a cluster's older log entries).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(uid: try c.decode(MessageUID.self, forKey: .uid), serverID: try c.decode(ServerID.self, forKey: .serverID),
                  channelID: try c.decode(ChannelID.self, forKey: .channelID), seq: try c.decode(UInt64.self, forKey: .seq),
                  sender: try c.decode(UserID.self, forKey: .sender), sentTime: try c.decode(UInt64.self, forKey: .sentTime),
                  content: try c.decode(MessageContent.self, forKey: .content), mentions: try c.decode([UserID].self, forKey: .mentions),
                  mentionAll: try c.decode(Bool.self, forKey: .mentionAll), needReceipt: try c.decode(Bool.self, forKey: .needReceipt),
                  clientID: try c.decode(String.self, forKey: .clientID))
        reply = try c.decodeIfPresent(ReplyRef.self, forKey: .reply)
        threadRoot = try c.decodeIfPresent(MessageUID.self, forKey: .threadRoot) ?? 0
        changes = try c.decodeIfPresent(MessageChanges.self, forKey: .changes) ?? MessageChanges()
        attachments = try c.decodeIfPresent([FileAttachment].self, forKey: .attachments) ?? []
        withheld = try c.decodeIfPresent(Bool.self, forKey: .withheld) ?? false
        webhook = try c.decodeIfPresent(WebhookAuthor.self, forKey: .webhook)
    }
}

/// One durable change to the directory, in the order it must be written.
public enum DirectoryChange: Sendable, Codable, Equatable {
    case serverSaved(ServerRecord)
    case serverDeleted(ServerID)
    case memberSaved(MemberRecord)
    case memberRemoved(ServerID, UserID)
    case inviteSaved(InviteRecord)
    case inviteRemoved(ServerID, UserID)
    case channelSaved(ChannelRecord)
    case channelDeleted(ChannelID)
    case banSaved(BanRecord)
    case banRemoved(ServerID, UserID)
    case roleSaved(RoleRecord)
    /// The role and its overrides (its holders' member rows are saved after).
    case roleDeleted(ServerID, RoleID)
    /// Saved, or removed when Inherit.
    case overrideSaved(OverrideRecord)
    /// An invite code made, or used (its count of uses).
    case inviteCodeSaved(InviteCode)
    /// Revoked, used up, or gone with its server or channel.
    case inviteCodeRemoved(ServerID, String)
    /// A member timed out (Moderation.swift), or the timeout lifted.
    case timeoutSaved(TimeoutRecord)
    case timeoutRemoved(ServerID, UserID)
}
