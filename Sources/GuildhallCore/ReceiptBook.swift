// Every channel's group read receipts (docs/features.md), with the way from a
// requested message's UID to its channel and seq, so receipt questions need
// no store read. Pure value; no I/O.

public struct ReceiptBook: Sendable {
    public private(set) var channels: [ChannelID: ChannelReceipts] = [:]
    private var requested: [MessageUID: (channel: ChannelID, seq: UInt64)] = [:]

    public init() {}

    /// The channel and seq of a message whose receipts were requested.
    public func place(of uid: MessageUID) -> (channel: ChannelID, seq: UInt64)? { requested[uid] }

    public func isRequested(_ uid: MessageUID) -> Bool { requested[uid] != nil }

    public func channel(_ id: ChannelID) -> ChannelReceipts? { channels[id] }

    /// Records a request; false when the message was requested already.
    @discardableResult
    public mutating func addRequest(_ r: ChannelReceipts.Request, in channel: ChannelID) -> Bool {
        guard requested[r.uid] == nil else { return false }
        requested[r.uid] = (channel, r.seq)
        return channels[channel, default: ChannelReceipts()].addRequest(r)
    }

    /// Records a response (see `ChannelReceipts.respond`).
    public mutating func respond(_ user: UserID, in channel: ChannelID, upTo seq: UInt64, floor: UInt64,
                                 at time: UInt64) -> ChannelReceipts.Advance? {
        channels[channel, default: ChannelReceipts()].respond(user, upTo: seq, floor: floor, at: time)
    }

    /// The advance `respond` would make, without making it.
    public func responding(_ user: UserID, in channel: ChannelID, upTo seq: UInt64, floor: UInt64,
                           at time: UInt64) -> ChannelReceipts.Advance? {
        (channels[channel] ?? ChannelReceipts()).responding(user, upTo: seq, floor: floor, at: time)
    }

    /// Takes a stored advance: at startup, and once a response committed.
    public mutating func load(_ advance: ChannelReceipts.Advance, in channel: ChannelID) {
        channels[channel, default: ChannelReceipts()].load(advance)
    }

    /// Forgets a deleted channel's receipts.
    public mutating func remove(channel: ChannelID) {
        guard let c = channels.removeValue(forKey: channel) else { return }
        for r in c.requests { requested.removeValue(forKey: r.uid) }
    }
}
