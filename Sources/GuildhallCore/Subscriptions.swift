// The subscription model of README "What clients receive" as values: the seven kinds, their
// per-user limits, and the book that records who holds what.
//
// Subscriptions belong to sessions; limits count per user across the user's
// sessions, a target held by several sessions of one user counting once.
// Among the three channel levels (messages, unread count, unread status) a
// session holds at most one per channel: the last subscribed wins. Typing is
// independent of them. The book also keeps the reverse index (target ->
// sessions) that fan-out reads. Pure; owned by the loop thread.

/// A session's identity within one server process.
public typealias SessionKey = UInt64

/// The subscription types, with the protocol's numbers.
public enum SubscriptionKind: Int, Sendable, CaseIterable, Hashable {
    case channelMessages = 1
    case channelUnreadCount = 2
    case channelUnreadStatus = 3
    case serverNotifications = 4
    case channelTyping = 5
    case guestChannel = 6
    case guestServer = 7

    public var targetsChannel: Bool {
        switch self {
        case .serverNotifications, .guestServer: false
        default: true
        }
    }

    public var isGuestKind: Bool { self == .guestChannel || self == .guestServer }

    /// The channel level this kind sets, for the three that replace each other.
    public var channelLevel: ChannelLevel? {
        switch self {
        case .channelMessages: .messages
        case .channelUnreadCount: .unreadCount
        case .channelUnreadStatus: .unreadStatus
        default: nil
        }
    }
}

/// How much of a channel a member session receives; richer is greater.
public enum ChannelLevel: Int, Sendable, Codable, Comparable, CaseIterable {
    case unreadStatus = 1
    case unreadCount = 2
    case messages = 3

    public static func < (a: ChannelLevel, b: ChannelLevel) -> Bool { a.rawValue < b.rawValue }

    public var kind: SubscriptionKind {
        switch self {
        case .messages: .channelMessages
        case .unreadCount: .channelUnreadCount
        case .unreadStatus: .channelUnreadStatus
        }
    }
}

/// A server, or a channel of a server.
public struct SubscriptionTarget: Hashable, Sendable, Codable {
    public let server: ServerID
    public let channel: ChannelID

    public init(server: ServerID, channel: ChannelID = 0) {
        self.server = server
        self.channel = channel
    }
}

/// Per-user limits (settings).
public struct SubscriptionLimits: Sendable, Equatable {
    public var channelMessages = 100
    public var channelUnreadCount = 500
    public var channelUnreadStatus = 1000
    public var serverNotifications = 2000
    public var channelTyping = 100
    public var guestChannel = 100
    public var guestServer = 100
    /// The most channels auto-subscribe mode covers; the unread-status limit stretches to it in auto mode.
    public var autoChannels = 10_000

    public init() {}

    public func limit(_ kind: SubscriptionKind) -> Int {
        switch kind {
        case .channelMessages: channelMessages
        case .channelUnreadCount: channelUnreadCount
        case .channelUnreadStatus: channelUnreadStatus
        case .serverNotifications: serverNotifications
        case .channelTyping: channelTyping
        case .guestChannel: guestChannel
        case .guestServer: guestServer
        }
    }
}

/// One session's subscriptions.
public struct SessionSubscriptions: Sendable, Equatable {
    public let user: UserID
    public var channels: [ChannelID: (server: ServerID, level: ChannelLevel)] = [:]
    public var typing: [ChannelID: ServerID] = [:]
    public var servers: Set<ServerID> = []
    public var guestChannels: [ChannelID: ServerID] = [:]
    public var guestServers: Set<ServerID> = []

    public init(user: UserID) { self.user = user }

    public func holds(_ kind: SubscriptionKind, _ t: SubscriptionTarget) -> Bool {
        switch kind {
        case .channelMessages, .channelUnreadCount, .channelUnreadStatus: channels[t.channel]?.level == kind.channelLevel
        case .channelTyping: typing[t.channel] != nil
        case .serverNotifications: servers.contains(t.server)
        case .guestChannel: guestChannels[t.channel] != nil
        case .guestServer: guestServers.contains(t.server)
        }
    }

    /// Every (kind, target) held, for teardown.
    public var all: [(SubscriptionKind, SubscriptionTarget)] {
        var out: [(SubscriptionKind, SubscriptionTarget)] = []
        for (c, v) in channels { out.append((v.level.kind, SubscriptionTarget(server: v.server, channel: c))) }
        for (c, s) in typing { out.append((.channelTyping, SubscriptionTarget(server: s, channel: c))) }
        for s in servers { out.append((.serverNotifications, SubscriptionTarget(server: s))) }
        for (c, s) in guestChannels { out.append((.guestChannel, SubscriptionTarget(server: s, channel: c))) }
        for s in guestServers { out.append((.guestServer, SubscriptionTarget(server: s))) }
        return out
    }

    public static func == (a: SessionSubscriptions, b: SessionSubscriptions) -> Bool {
        a.user == b.user && a.typing == b.typing && a.servers == b.servers && a.guestChannels == b.guestChannels
            && a.guestServers == b.guestServers && a.channels.count == b.channels.count
            && a.channels.allSatisfy { b.channels[$0.key]?.level == $0.value.level && b.channels[$0.key]?.server == $0.value.server }
    }
}

/// Every session's subscriptions, the per-user tallies the limits count, and
/// the reverse index fan-out reads.
public final class SubscriptionBook {
    public private(set) var sessions: [SessionKey: SessionSubscriptions] = [:]

    /// Subscriptions held, by type (SubscriptionKind raw value), over every session: for metrics, once a second.
    public var countsByKind: [Int: Int] {
        var counts: [Int: Int] = [:]
        for s in sessions.values {
            for (_, c) in s.channels { counts[c.level.kind.rawValue, default: 0] += 1 }
            counts[SubscriptionKind.channelTyping.rawValue, default: 0] += s.typing.count
            counts[SubscriptionKind.serverNotifications.rawValue, default: 0] += s.servers.count
            counts[SubscriptionKind.guestChannel.rawValue, default: 0] += s.guestChannels.count
            counts[SubscriptionKind.guestServer.rawValue, default: 0] += s.guestServers.count
        }
        return counts
    }
    /// user -> kind -> target -> number of the user's sessions holding it.
    private var tallies: [UserID: [SubscriptionKind: [SubscriptionTarget: Int]]] = [:]
    /// kind (by raw value) -> target -> sessions holding it. Channel kinds key by channel only
    /// (server 0). An array by kind: a fan-out asks it two or three times a message, and a
    /// dictionary keyed by the kind hashed it with SipHash each time.
    private var index = [[SubscriptionTarget: Set<SessionKey>]](repeating: [:], count: (SubscriptionKind.allCases.map(\.rawValue).max() ?? 0) + 1)
    /// Channel-message subscriptions taken (true) or dropped (false) since the
    /// last `takeMessageChanges()`, in order: the interest gateways keep of their sessions.
    private var messageChanges: [MessageInterestChange] = []
    /// Whether users' tallies going 0 -> 1 -> 0 are recorded for their homes
    /// (SubscriptionAllowance; with one home, its own tallies are the whole count).
    public var recordsTallies = false
    private var tallyChanges: [TallyChange] = []

    public init() {}

    /// The tally changes since the last call, in order.
    public func takeTallyChanges() -> [TallyChange] {
        guard !tallyChanges.isEmpty else { return [] }
        defer { tallyChanges.removeAll(keepingCapacity: true) }
        return tallyChanges
    }

    /// The channel-message subscriptions taken and dropped since the last call, in order.
    public func takeMessageChanges() -> [MessageInterestChange] {
        guard !messageChanges.isEmpty else { return [] }
        defer { messageChanges.removeAll(keepingCapacity: true) }
        return messageChanges
    }

    public enum Outcome: Sendable, Equatable {
        case ok
        case limitReached(Int)
    }

    public func open(_ session: SessionKey, user: UserID) {
        sessions[session] = SessionSubscriptions(user: user)
    }

    /// Drops every subscription of a session.
    public func close(_ session: SessionKey) {
        guard let s = sessions[session] else { return }
        for (kind, target) in s.all { remove(session, kind, target) }
        sessions.removeValue(forKey: session)
    }

    /// Distinct targets of `kind` the user holds across sessions.
    public func count(_ user: UserID, _ kind: SubscriptionKind) -> Int { tallies[user]?[kind]?.count ?? 0 }

    /// Sessions holding `kind` on `target` (for channel kinds, only the channel counts).
    public func holders(_ kind: SubscriptionKind, _ target: SubscriptionTarget) -> Set<SessionKey> {
        index[kind.rawValue][Self.indexKey(kind, target)] ?? []
    }

    public func subscriptions(of session: SessionKey) -> SessionSubscriptions? { sessions[session] }

    /// The level at which `session` holds `channel`, if it does (read in place: the fan-out asks per recipient).
    public func level(of session: SessionKey, in channel: ChannelID) -> ChannelLevel? { sessions[session]?.channels[channel]?.level }

    /// Adds a subscription, replacing another channel level of the same
    /// channel in this session. `limit` is the per-user limit for `kind`.
    public func subscribe(_ session: SessionKey, _ kind: SubscriptionKind, _ target: SubscriptionTarget, limit: Int) -> Outcome {
        guard let s = sessions[session] else { return .ok }
        if s.holds(kind, target) { return .ok }
        let alreadyCounted = (tallies[s.user]?[kind]?[target] ?? 0) > 0
        if !alreadyCounted && count(s.user, kind) >= limit { return .limitReached(limit) }
        if kind.channelLevel != nil, let current = s.channels[target.channel] {
            remove(session, current.level.kind, SubscriptionTarget(server: current.server, channel: target.channel))
        }
        add(session, kind, target)
        return .ok
    }

    public func unsubscribe(_ session: SessionKey, _ kind: SubscriptionKind, _ target: SubscriptionTarget) {
        guard let s = sessions[session], s.holds(kind, target) else { return }
        remove(session, kind, target)
    }

    /// Drops everything a session holds in `server` (left, kicked, deleted,
    /// or left as a guest); `kinds` limits which.
    public func drop(_ session: SessionKey, server: ServerID, kinds: Set<SubscriptionKind> = Set(SubscriptionKind.allCases)) {
        guard let s = sessions[session] else { return }
        for (kind, target) in s.all where target.server == server && kinds.contains(kind) { remove(session, kind, target) }
    }

    /// Drops a deleted channel from every session.
    public func dropChannel(_ channel: ChannelID) {
        for kind in SubscriptionKind.allCases where kind.targetsChannel {
            for session in holders(kind, SubscriptionTarget(server: 0, channel: channel)) {
                guard let s = sessions[session] else { continue }
                let server = s.channels[channel]?.server ?? s.typing[channel] ?? s.guestChannels[channel] ?? 0
                remove(session, kind, SubscriptionTarget(server: server, channel: channel))
            }
        }
    }

    // MARK: Internals

    private static func indexKey(_ kind: SubscriptionKind, _ t: SubscriptionTarget) -> SubscriptionTarget {
        kind.targetsChannel ? SubscriptionTarget(server: 0, channel: t.channel) : SubscriptionTarget(server: t.server)
    }

    private static func tallyKey(_ kind: SubscriptionKind, _ t: SubscriptionTarget) -> SubscriptionTarget {
        kind.targetsChannel ? t : SubscriptionTarget(server: t.server)
    }

    private func add(_ session: SessionKey, _ kind: SubscriptionKind, _ target: SubscriptionTarget) {
        let user = sessions[session]!.user
        switch kind {
        case .channelMessages, .channelUnreadCount, .channelUnreadStatus:
            sessions[session]!.channels[target.channel] = (target.server, kind.channelLevel!)
        case .channelTyping: sessions[session]!.typing[target.channel] = target.server
        case .serverNotifications: sessions[session]!.servers.insert(target.server)
        case .guestChannel: sessions[session]!.guestChannels[target.channel] = target.server
        case .guestServer: sessions[session]!.guestServers.insert(target.server)
        }
        let tk = Self.tallyKey(kind, target)
        tallies[user, default: [:]][kind, default: [:]][tk, default: 0] += 1
        if recordsTallies, tallies[user]![kind]![tk] == 1 { tallyChanges.append(TallyChange(user: user, kind: kind, target: tk, holds: true)) }
        index[kind.rawValue][Self.indexKey(kind, target), default: []].insert(session)
        if kind == .channelMessages { messageChanges.append(MessageInterestChange(session: session, user: user, target: target, holds: true)) }
    }

    private func remove(_ session: SessionKey, _ kind: SubscriptionKind, _ target: SubscriptionTarget) {
        let user = sessions[session]!.user
        switch kind {
        case .channelMessages, .channelUnreadCount, .channelUnreadStatus:
            sessions[session]!.channels.removeValue(forKey: target.channel)
        case .channelTyping: sessions[session]!.typing.removeValue(forKey: target.channel)
        case .serverNotifications: sessions[session]!.servers.remove(target.server)
        case .guestChannel: sessions[session]!.guestChannels.removeValue(forKey: target.channel)
        case .guestServer: sessions[session]!.guestServers.remove(target.server)
        }
        let tk = Self.tallyKey(kind, target)
        if let n = tallies[user]?[kind]?[tk] {
            if n <= 1 {
                tallies[user]![kind]!.removeValue(forKey: tk)
                if recordsTallies { tallyChanges.append(TallyChange(user: user, kind: kind, target: tk, holds: false)) }
            } else {
                tallies[user]![kind]![tk] = n - 1
            }
            if tallies[user]![kind]!.isEmpty { tallies[user]!.removeValue(forKey: kind) }
            if tallies[user]!.isEmpty { tallies.removeValue(forKey: user) }
        }
        let ik = Self.indexKey(kind, target)
        index[kind.rawValue][ik]?.remove(session)
        if index[kind.rawValue][ik]?.isEmpty == true { index[kind.rawValue].removeValue(forKey: ik) }
        if kind == .channelMessages { messageChanges.append(MessageInterestChange(session: session, user: user, target: target, holds: false)) }
    }
}

/// A session took or dropped a channel-message subscription.
public struct MessageInterestChange: Sendable, Equatable {
    public let session: SessionKey
    public let user: UserID
    public let target: SubscriptionTarget
    public let holds: Bool
}
