// The audit log (docs/features.md "Audit log"): one entry per change a
// member made with a permission, stored with the change in the same commit,
// so an entry exists exactly when its change does. What an entry says is
// built here from the records before and after (`AuditDiff`), never from the
// request: a field counts as changed only when the stored value differs.
// Values are JSON text, so a number, a string and a list read the same way
// on every client. Pure.

/// What an entry records; the raw values are the wire's `AuditAction`.
public enum AuditAction: UInt32, Sendable, Codable, CaseIterable {
    case serverUpdated = 1, ownershipTransferred, channelCreated, channelUpdated, channelDeleted
    case memberInvited, memberKicked, memberBanned, memberUnbanned, memberTimedOut, memberRolesChanged
    case roleCreated, roleUpdated, roleDeleted, overrideChanged
    case messageRecalled, messageDeleted, messagePinned, messageUnpinned
    case inviteCreated, inviteRevoked, memberNicknameChanged
    case webhookCreated, webhookDeleted
}

/// One field a change touched; "" where it did not exist.
public struct AuditChange: Sendable, Codable, Equatable {
    public var key: String
    public var before: String
    public var after: String

    public init(key: String, before: String, after: String) { self.key = key; self.before = before; self.after = after }
}

/// One change made with a permission.
public struct AuditEntry: Sendable, Codable, Equatable {
    /// Increases with time (a UID), so newest first is by id.
    public var id: UInt64
    public var serverID: ServerID
    /// Empty when the server made it (a ban's end).
    public var actor: UserID
    public var action: AuditAction
    public var target: String
    public var channelID: UInt64
    public var changes: [AuditChange]
    public var reason: String
    public var time: UInt64

    public init(id: UInt64, serverID: ServerID, actor: UserID, action: AuditAction, target: String, channelID: UInt64 = 0,
                changes: [AuditChange] = [], reason: String = "", time: UInt64) {
        self.id = id; self.serverID = serverID; self.actor = actor; self.action = action; self.target = target
        self.channelID = channelID; self.changes = changes; self.reason = reason; self.time = time
    }

    /// The longest reason an actor may give.
    public static let maxReasonCharacters = 512

    public static func validReason(_ reason: String) throws(Failure) -> String {
        guard reason.count <= maxReasonCharacters else {
            throw Failure.badRequest("reason has \(reason.count) characters; at most \(maxReasonCharacters)")
        }
        return reason
    }
}

/// A page of a server's log, newest first: entries older than `before` (0: from the newest) that pass every filter given.
public struct AuditQuery: Sendable, Equatable {
    public var serverID: ServerID
    public var before: UInt64
    public var limit: Int
    public var actor: UserID?
    public var action: AuditAction?
    public var target: String?

    public init(serverID: ServerID, before: UInt64 = 0, limit: Int, actor: UserID? = nil, action: AuditAction? = nil, target: String? = nil) {
        self.serverID = serverID; self.before = before; self.limit = limit; self.actor = actor; self.action = action; self.target = target
    }

    public static let defaultLimit = 50, maxLimit = 100
}

/// The fields that differ between two versions of a record, as an entry's changes.
public struct AuditDiff {
    public private(set) var changes: [AuditChange] = []

    public init() {}

    /// Records `key` if its JSON texts differ; "" is "did not exist".
    private mutating func add(_ key: String, _ before: String, _ after: String) {
        if before != after { changes.append(AuditChange(key: key, before: before, after: after)) }
    }

    /// A string; nil is "did not exist".
    public mutating func field(_ key: String, _ before: String?, _ after: String?) {
        add(key, before.map(Self.json) ?? "", after.map(Self.json) ?? "")
    }

    public mutating func field<N: BinaryInteger>(_ key: String, _ before: N?, _ after: N?) {
        add(key, before.map { "\($0)" } ?? "", after.map { "\($0)" } ?? "")
    }

    public mutating func field(_ key: String, _ before: Bool?, _ after: Bool?) {
        add(key, before.map { "\($0)" } ?? "", after.map { "\($0)" } ?? "")
    }

    /// Ids (role ids) as a JSON list of strings, as the wire's JSON writes 64-bit numbers.
    public mutating func ids(_ key: String, _ before: [UInt64]?, _ after: [UInt64]?) {
        let list = { (ids: [UInt64]) in "[" + ids.sorted().map { "\"\($0)\"" }.joined(separator: ",") + "]" }
        add(key, before.map(list) ?? "", after.map(list) ?? "")
    }

    /// A JSON string literal.
    public static func json(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20: out += "\\u00" + (u.value < 0x10 ? "0" : "") + String(u.value, radix: 16)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}

extension AuditDiff {
    /// The fields a server's update may change.
    public static func server(_ before: ServerRecord?, _ after: ServerRecord?) -> [AuditChange] {
        var d = AuditDiff()
        d.field("name", before?.name, after?.name)
        d.field("icon", before?.icon, after?.icon)
        d.field("custom", before?.custom, after?.custom)
        d.field("openJoin", before?.openJoin, after?.openJoin)
        d.field("allowGuests", before?.allowGuests, after?.allowGuests)
        d.field("discoverable", before?.discoverable, after?.discoverable)
        d.field("owner", before?.owner, after?.owner)
        return d.changes
    }

    public static func channel(_ before: ChannelRecord?, _ after: ChannelRecord?) -> [AuditChange] {
        var d = AuditDiff()
        d.field("name", before?.name, after?.name)
        d.field("topic", before?.topic, after?.topic)
        d.field("custom", before?.custom, after?.custom)
        d.field("guestVisibility", before?.guestVisibility.rawValue, after?.guestVisibility.rawValue)
        d.field("slowModeSeconds", before?.slowModeSeconds, after?.slowModeSeconds)
        return d.changes
    }

    public static func role(_ before: RoleRecord?, _ after: RoleRecord?) -> [AuditChange] {
        var d = AuditDiff()
        d.field("name", before?.name, after?.name)
        d.field("position", before?.position, after?.position)
        d.field("allow", before?.permissions.allow.rawValue, after?.permissions.allow.rawValue)
        d.field("deny", before?.permissions.deny.rawValue, after?.permissions.deny.rawValue)
        return d.changes
    }
}
