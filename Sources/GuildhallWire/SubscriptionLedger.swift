// What one session subscribed to and which servers it entered as a guest,
// kept beside the session so the subscriptions can be asked for again where
// they were lost: the SDK after a fresh login, a cluster's gateway after a
// guild's home moved to another node (which starts with none). Levels of a
// channel (messages, unread count, unread status) replace each other.
// Values only.

/// A channel of a server (channel 0: the server itself).
public struct ChannelTarget: Sendable, Hashable {
    public var serverID: UInt64
    public var channelID: UInt64
    public init(serverID: UInt64, channelID: UInt64) { self.serverID = serverID; self.channelID = channelID }
}

public struct SubscriptionLedger: Sendable {
    public var guestServers: Set<UInt64> = []
    public var held: [GHSubscriptionType: Set<ChannelTarget>] = [:]
    /// USER_PRESENCE targets (held at the session's own user's home, not a guild's).
    public var watchedUsers: Set<String> = []

    static let levels: [GHSubscriptionType] = [.channelMsg, .channelUnreadCount, .channelUnreadStatus]
    /// The order to ask again in: servers before their channels, guest entries first.
    static let order: [GHSubscriptionType] = [.serverMsg, .guestServer, .channelMsg, .channelUnreadCount, .channelUnreadStatus, .channelTyping, .guestChannel]
    public static let maxTargetsPerRequest = 100

    public init() {}

    public var isEmpty: Bool { guestServers.isEmpty && held.values.allSatisfy(\.isEmpty) && watchedUsers.isEmpty }

    public mutating func record(_ type: GHSubscriptionType, _ operation: GHSubscribeOperation, _ targets: [ChannelTarget]) {
        for t in targets {
            if operation == .unsubscribe {
                held[type]?.remove(t)
                continue
            }
            if Self.levels.contains(type) { for other in Self.levels where other != type { held[other]?.remove(t) } }
            held[type, default: []].insert(t)
        }
    }

    /// A subscribe request as asked (every target, before the answer says which held).
    public mutating func record(_ r: GHSubscribe) {
        if r.type == .userPresence { return watch(r.operation, r.targets.map(\.userID)) }
        record(r.type, r.operation, r.targets.map { ChannelTarget(serverID: $0.serverID, channelID: $0.channelID) })
    }

    public mutating func watch(_ operation: GHSubscribeOperation, _ users: [String]) {
        if operation == .unsubscribe { watchedUsers.subtract(users) } else { watchedUsers.formUnion(users) }
    }

    /// The USER_PRESENCE requests that ask for the watched users again, at most 100 each.
    public func presenceRequests() -> [GHRequest.OneOf_Body] {
        let users = watchedUsers.sorted()
        return stride(from: 0, to: users.count, by: Self.maxTargetsPerRequest).map { start in
            var r = GHSubscribe()
            r.type = .userPresence
            r.targets = users[start..<min(start + Self.maxTargetsPerRequest, users.count)].map { u in
                var t = GHSubscriptionTarget()
                t.userID = u
                return t
            }
            return .subscribe(r)
        }
    }

    public mutating func forgetGuest(_ server: UInt64) {
        guestServers.remove(server)
        for type in [GHSubscriptionType.guestServer, .guestChannel] { held[type] = held[type]?.filter { $0.serverID != server } }
    }

    /// The requests that ask for it all again, for the servers `includes` picks:
    /// guest entries, then subscriptions by type, at most 100 targets each.
    public func requests(for includes: (UInt64) -> Bool = { _ in true }) -> [GHRequest.OneOf_Body] {
        var out: [GHRequest.OneOf_Body] = []
        for server in guestServers.sorted() where includes(server) {
            var r = GHEnterAsGuest()
            r.serverID = server
            out.append(.enterAsGuest(r))
        }
        for type in Self.order {
            let targets = (held[type] ?? []).filter { includes($0.serverID) }.sorted { ($0.serverID, $0.channelID) < ($1.serverID, $1.channelID) }
            var start = 0
            while start < targets.count {
                var r = GHSubscribe()
                r.type = type
                r.operation = .subscribe
                r.targets = targets[start..<min(start + Self.maxTargetsPerRequest, targets.count)].map {
                    var t = GHSubscriptionTarget()
                    t.serverID = $0.serverID
                    t.channelID = $0.channelID
                    return t
                }
                out.append(.subscribe(r))
                start += Self.maxTargetsPerRequest
            }
        }
        return out
    }
}
