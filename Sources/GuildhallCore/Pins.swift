// Pins (docs/features.md "Pins"): the messages pinned in each channel, the
// last pinned first, at most a setting's number per channel. Whether a
// message may be pinned (it exists in the channel and is not removed) is
// read from the store; this keeps only which are pinned. Pure.

/// One pinned message.
public struct PinRecord: Sendable, Codable, Equatable {
    public var channelID: ChannelID
    public var messageUID: MessageUID
    public var pinnedBy: UserID
    public var pinnedAt: UInt64

    public init(channelID: ChannelID, messageUID: MessageUID, pinnedBy: UserID, pinnedAt: UInt64) {
        self.channelID = channelID; self.messageUID = messageUID; self.pinnedBy = pinnedBy; self.pinnedAt = pinnedAt
    }
}

/// Every channel's pins.
public struct ChannelPins: Sendable {
    private var byChannel: [ChannelID: [PinRecord]] = [:]

    public init() {}

    public mutating func load(_ pins: [PinRecord]) {
        for p in pins { byChannel[p.channelID, default: []].append(p) }
        for c in byChannel.keys { byChannel[c]!.sort { ($0.pinnedAt, $0.messageUID) > ($1.pinnedAt, $1.messageUID) } }
    }

    /// The channel's pins, the last pinned first.
    public func pins(in channel: ChannelID) -> [PinRecord] { byChannel[channel] ?? [] }

    public func isPinned(_ uid: MessageUID, in channel: ChannelID) -> Bool { byChannel[channel]?.contains { $0.messageUID == uid } == true }

    /// Why `uid` may not be pinned in `channel` now (the message itself aside), or nil.
    public func pinProblem(_ uid: MessageUID, in channel: ChannelID, limit: Int) -> Failure? {
        if isPinned(uid, in: channel) { return .conflict("message \(uid) is already pinned") }
        if (byChannel[channel]?.count ?? 0) >= limit {
            return Failure(.limitReached, "channel \(channel) has \(limit) pins (pins-per-channel); unpin one first")
        }
        return nil
    }

    public mutating func pinned(_ p: PinRecord) {
        guard !isPinned(p.messageUID, in: p.channelID) else { return }
        byChannel[p.channelID, default: []].insert(p, at: 0)
    }

    public mutating func unpinned(_ uid: MessageUID, in channel: ChannelID) {
        byChannel[channel]?.removeAll { $0.messageUID == uid }
        if byChannel[channel]?.isEmpty == true { byChannel[channel] = nil }
    }

    public mutating func forget(channel: ChannelID) { byChannel[channel] = nil }
}
