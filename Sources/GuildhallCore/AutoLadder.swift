// The channel levels auto-subscribe mode gives a user (README "What clients receive"): channels
// ordered by the user's last activity, most recent first, take the richest
// level with room: messages for the first `messages`, unread count for the
// next `unreadCount`, unread status for the rest up to `cap`. Activity moves
// a channel to the front, promoting it and demoting the least recently used
// one of the level it enters (an LRU ladder). Pure; owned by the loop.

public struct AutoLadder: Sendable, Equatable {
    public let messages: Int
    public let unreadCount: Int
    public let cap: Int
    public private(set) var levels: [ChannelID: ChannelLevel] = [:]
    /// Channels of the user past the cap at the last assignment: auto mode leaves them out.
    public private(set) var uncovered = 0

    public init(limits: SubscriptionLimits) {
        messages = limits.channelMessages
        unreadCount = limits.channelUnreadCount
        cap = limits.autoChannels
    }

    /// Assigns every level from scratch; returns the changes (nil level: no longer covered).
    public mutating func assign(_ channels: [(id: ChannelID, activity: UInt64)]) -> [ChannelID: ChannelLevel?] {
        // Ties (same millisecond) go to the newer channel: ids grow with time.
        let ordered = channels.sorted { ($0.activity, $0.id) > ($1.activity, $1.id) }
        var fresh: [ChannelID: ChannelLevel] = [:]
        for (rank, c) in ordered.prefix(cap).enumerated() { fresh[c.id] = level(forRank: rank) }
        uncovered = max(0, ordered.count - cap)
        var changes: [ChannelID: ChannelLevel?] = [:]
        for (id, l) in fresh where levels[id] != l { changes[id] = l }
        for id in levels.keys where fresh[id] == nil { changes[id] = .some(nil) }
        levels = fresh
        return changes
    }

    /// Moves `channel` to the front after activity; returns the changes.
    /// `activity` gives each covered channel's last activity.
    public mutating func touch(_ channel: ChannelID, activity: (ChannelID) -> UInt64) -> [ChannelID: ChannelLevel?] {
        if levels[channel] == .messages { return [:] }
        var changes: [ChannelID: ChannelLevel?] = [channel: .messages]
        levels[channel] = .messages
        // Push the coldest channel of each overfull level one level down; the
        // place the touched channel left stops the cascade.
        var level = ChannelLevel.messages
        while true {
            let holders = levels.filter { $0.value == level && $0.key != channel }
            if holders.count + (level == .messages ? 1 : 0) <= capacity(level) { break }
            let coldest = holders.min { (activity($0.key), $0.key) < (activity($1.key), $1.key) }!.key
            guard let lower = ChannelLevel(rawValue: level.rawValue - 1) else {
                levels.removeValue(forKey: coldest)
                changes[coldest] = .some(nil)
                break
            }
            levels[coldest] = lower
            changes[coldest] = lower
            level = lower
        }
        return changes
    }

    public mutating func remove(_ channel: ChannelID) { levels.removeValue(forKey: channel) }

    private func capacity(_ l: ChannelLevel) -> Int {
        switch l {
        case .messages: messages
        case .unreadCount: unreadCount
        case .unreadStatus: max(0, cap - messages - unreadCount)
        }
    }

    private func level(forRank rank: Int) -> ChannelLevel {
        rank < messages ? .messages : rank < messages + unreadCount ? .unreadCount : .unreadStatus
    }
}
