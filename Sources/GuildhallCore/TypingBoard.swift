// Who is typing where (README "What clients receive"). A user's typing is fanned out at most
// once per channel per `throttleMs`; a typing state expires `expiryMs` after
// the user last typed, or when the user sends a message. Pure; owned by the loop.

public struct TypingBoard: Sendable {
    public var throttleMs: UInt64
    public var expiryMs: UInt64
    /// channel -> user -> (last typed, last fanned out)
    private var channels: [ChannelID: [UserID: (typed: UInt64, fannedOut: UInt64)]] = [:]

    public init(throttleMs: UInt64 = 3_000, expiryMs: UInt64 = 10_000) {
        self.throttleMs = throttleMs
        self.expiryMs = expiryMs
    }

    /// Records that `user` types in `channel`; true when it is to be fanned out now.
    public mutating func typed(_ user: UserID, in channel: ChannelID, now: UInt64) -> Bool {
        let previous = channels[channel]?[user]
        if let previous, now < previous.fannedOut + throttleMs {
            channels[channel]![user]!.typed = now
            return false
        }
        channels[channel, default: [:]][user] = (now, now)
        return true
    }

    /// Ends a user's typing (they sent a message); true when they were typing.
    @discardableResult
    public mutating func stopped(_ user: UserID, in channel: ChannelID) -> Bool {
        // Looked up first: a send asks this of every sender, nearly always typing nowhere, and a
        // modifying access would make the table unique (an allocation) even to find nothing.
        guard let i = channels.index(forKey: channel) else { return false }
        return channels.values[i].removeValue(forKey: user) != nil
    }

    /// Users typing in `channel` at `now`, oldest first, without `excluding`.
    public mutating func typers(in channel: ChannelID, now: UInt64, excluding: UserID) -> [(user: UserID, time: UInt64)] {
        guard var users = channels[channel] else { return [] }
        users = users.filter { now < $0.value.typed + expiryMs }
        channels[channel] = users.isEmpty ? nil : users
        return users.filter { $0.key != excluding }.map { ($0.key, $0.value.typed) }.sorted { ($0.time, $0.user) < ($1.time, $1.user) }
    }

    public mutating func dropChannel(_ channel: ChannelID) { channels.removeValue(forKey: channel) }
}
