// Read positions and mentions, and unread info as arithmetic (docs/architecture.md):
// unread = lastSeq - readSeq, exact; the mention count is the number of
// mentions of the user after the read position within the mention window.
// Nothing here is written per member per message. Pure; owned by the loop.

/// Where a user stands in a channel.
public struct ReadPosition: Sendable, Codable, Equatable {
    /// The last seq read.
    public var readSeq: UInt64
    /// When the position last moved.
    public var ackTime: UInt64
    /// The user's last activity in the channel (sending, reading, typing, joining), for auto mode's ordering.
    public var activity: UInt64

    public init(readSeq: UInt64 = 0, ackTime: UInt64 = 0, activity: UInt64 = 0) {
        self.readSeq = readSeq; self.ackTime = ackTime; self.activity = activity
    }
}

/// A mention by id: its seq and time.
public struct MentionMark: Sendable, Codable, Equatable {
    public let seq: UInt64
    public let time: UInt64

    public init(seq: UInt64, time: UInt64) {
        self.seq = seq
        self.time = time
    }
}

/// Where a channel's messages stand: what a recipient's unread numbers need
/// of the channel, without its name, topic and settings. A live message
/// carries this much to the gateways (a whole `ChannelRecord` was copied
/// with each message at every hand-on, its strings' counts included).
public struct ChannelTip: Sendable, Equatable {
    public let id: ChannelID
    public let serverID: ServerID
    /// Seq and sent time of the newest message.
    public let lastSeq: UInt64
    public let lastMessageTime: UInt64
    /// Seqs recalled or deleted, which unread counts leave out.
    public let removed: RemovedSeqs

    public init(id: ChannelID, serverID: ServerID, lastSeq: UInt64, lastMessageTime: UInt64, removed: RemovedSeqs = RemovedSeqs()) {
        self.id = id; self.serverID = serverID; self.lastSeq = lastSeq; self.lastMessageTime = lastMessageTime; self.removed = removed
    }
}

extension ChannelRecord {
    public var tip: ChannelTip { ChannelTip(id: id, serverID: serverID, lastSeq: lastSeq, lastMessageTime: lastMessageTime, removed: removed) }
}

/// One user's read position and pending mentions in one channel.
public struct PositionState: Sendable, Codable, Equatable {
    public let position: ReadPosition
    public let mentions: [MentionMark]

    public init(position: ReadPosition, mentions: [MentionMark]) {
        self.position = position
        self.mentions = mentions
    }

    /// Messages after `readSeq` that are still there: the removed ones do not count.
    @inline(__always)
    static func unreadCount(lastSeq: UInt64, removed: RemovedSeqs, after readSeq: UInt64) -> UInt64 {
        guard lastSeq > readSeq else { return 0 }
        let all = lastSeq - readSeq
        return removed.isEmpty ? all : all - min(all, removed.count(after: readSeq))
    }

    /// The user's unread numbers in `channel`, as `ReadPositions.unread` counts them.
    public func unread(in channel: ChannelTip, now: UInt64, displayCap: UInt64, mentionWindowMs: UInt64) -> UnreadState {
        let readSeq = position.readSeq
        var mentioned: UInt64 = 0
        if !mentions.isEmpty {
            let floor = now > mentionWindowMs ? now - mentionWindowMs : 0
            for m in mentions where m.seq > readSeq && m.time >= floor && !channel.removed.contains(m.seq) { mentioned += 1 }
        }
        return UnreadState(serverID: channel.serverID, channelID: channel.id,
                           unreadCount: Self.unreadCount(lastSeq: channel.lastSeq, removed: channel.removed, after: readSeq),
                           maxCount: displayCap, mentionedCount: mentioned, ackTimestamp: position.ackTime,
                           lastMsgTime: channel.lastMessageTime, lastSeq: channel.lastSeq, readSeq: readSeq)
    }
}

/// A user's unread state of one channel, as the wire's UnreadInfo.
public struct UnreadState: Sendable, Equatable {
    public var serverID: ServerID
    public var channelID: ChannelID
    public var unreadCount: UInt64
    public var maxCount: UInt64
    public var mentionedCount: UInt64
    public var ackTimestamp: UInt64
    public var lastMsgTime: UInt64
    public var lastSeq: UInt64
    public var readSeq: UInt64

    public var hasUnread: Bool { unreadCount > 0 }
}

public final class ReadPositions {
    public struct Key: Hashable, Sendable {
        public let user: UserID
        public let channel: ChannelID
        public init(_ user: UserID, _ channel: ChannelID) { self.user = user; self.channel = channel }
    }

    /// A position, and whether it changed since the last `takeDirty()`. The
    /// mark lives in the entry so that a send's own read finds both in one
    /// look-up: a set of changed keys hashed the user's id a second time.
    struct Entry {
        var position: ReadPosition
        var dirty = false
    }

    private var entries: [Key: Entry] = [:]
    /// Mentions by id, per (user, channel): (seq, time) in ascending seq.
    private var mentions: [Key: [(seq: UInt64, time: UInt64)]] = [:]
    /// The keys whose entries are marked dirty, each once, to persist in groups.
    private var dirty: [Key] = []
    /// Per (user, channel), the highest seq a device of the user acknowledged
    /// receiving (kept apart from positions: few users have one, and the
    /// fan-out copies positions, not these).
    private var receivedSeqs: [Key: UInt64] = [:]
    private var dirtyReceived: Set<Key> = []

    public init() {}

    public func position(_ user: UserID, _ channel: ChannelID) -> ReadPosition {
        entries[Key(user, channel)]?.position ?? ReadPosition()
    }

    private func stored(_ key: Key) -> ReadPosition? { entries[key]?.position }

    public func load(_ user: UserID, _ channel: ChannelID, _ p: ReadPosition) {
        entries.change(Key(user, channel), default: Entry(position: p)) { $0.position = p }
    }

    /// Marks an entry dirty; whether it was not (its key is then listed).
    private static func mark(_ e: inout Entry) -> Bool {
        defer { e.dirty = true }
        return !e.dirty
    }

    /// Marks `key`'s entry dirty, if it is still there; whether it was not.
    private func markDirty(_ key: Key) -> Bool {
        var newly = false
        _ = entries.change(key) { newly = Self.mark(&$0) }
        return newly
    }

    /// Moves the read position forward to `seq` (never back); returns whether it moved.
    /// `written`: the store has the row already, so it is not written behind again.
    @discardableResult
    public func markRead(_ user: UserID, _ channel: ChannelID, upTo seq: UInt64, now: UInt64, written: Bool = false) -> Bool {
        readUp(user, channel, to: seq, now: now, written: written) < seq
    }

    /// `markRead`, returning the seq read before it: a sender's read of its
    /// own message (every send) takes one look-up for all of it, and none of
    /// mentions when there are none.
    public func readUp(_ user: UserID, _ channel: ChannelID, to seq: UInt64, now: UInt64, written: Bool = false) -> UInt64 {
        let key = Key(user, channel)
        var newlyDirty = false
        let before = entries.change(key, default: Entry(position: ReadPosition())) { e in
            let before = e.position.readSeq
            e.position = Self.afterReading(e.position, upTo: seq, now: now)
            if !written { newlyDirty = Self.mark(&e) }
            return before
        }
        if newlyDirty { dirty.append(key) }
        if before < seq, !mentions.isEmpty { pruneMentions(key, through: seq) }
        return before
    }

    /// The position `markRead` would leave, without moving it (to write it before it is applied).
    public func positionAfterReading(_ user: UserID, _ channel: ChannelID, upTo seq: UInt64, now: UInt64) -> ReadPosition {
        Self.afterReading(position(user, channel), upTo: seq, now: now)
    }

    private static func afterReading(_ before: ReadPosition, upTo seq: UInt64, now: UInt64) -> ReadPosition {
        var p = before
        p.activity = max(p.activity, now)
        if seq > p.readSeq {
            p.readSeq = seq
            p.ackTime = now
        }
        return p
    }

    /// Records activity without moving the read position.
    public func touch(_ user: UserID, _ channel: ChannelID, now: UInt64) {
        let key = Key(user, channel)
        let newlyDirty = entries.change(key, default: Entry(position: ReadPosition())) { e in
            e.position.activity = max(e.position.activity, now)
            return Self.mark(&e)
        }
        if newlyDirty { dirty.append(key) }
    }

    /// A device of `user` received `channel`'s messages up to `seq`; returns whether that is news.
    @discardableResult
    public func received(_ user: UserID, _ channel: ChannelID, upTo seq: UInt64) -> Bool {
        let key = Key(user, channel)
        guard seq > receivedSeq(user, channel) else { return false }
        receivedSeqs[key] = seq
        dirtyReceived.insert(key)
        return true
    }

    /// The highest seq of `channel` a device of `user` received or read.
    public func receivedSeq(_ user: UserID, _ channel: ChannelID) -> UInt64 {
        let key = Key(user, channel)
        return max(receivedSeqs[key] ?? 0, stored(key)?.readSeq ?? 0)
    }

    public func loadReceived(_ user: UserID, _ channel: ChannelID, _ seq: UInt64) { receivedSeqs[Key(user, channel)] = seq }

    /// The received seqs changed since the last call, to write in one job.
    public func takeDirtyReceived() -> [(Key, UInt64)] {
        defer { dirtyReceived.removeAll() }
        return dirtyReceived.compactMap { k in receivedSeqs[k].map { (k, $0) } }
    }

    public func addMention(_ user: UserID, _ channel: ChannelID, seq: UInt64, time: UInt64) {
        let key = Key(user, channel)
        guard seq > (stored(key)?.readSeq ?? 0) else { return }
        mentions[key, default: []].append((seq, time))
    }

    /// Everything the unread numbers of `user` in `channel` depend on, for a
    /// replica (a gateway's, of its sessions' users) to hold the same.
    public func state(_ user: UserID, _ channel: ChannelID) -> PositionState {
        let key = Key(user, channel)
        return PositionState(position: stored(key) ?? ReadPosition(), mentions: (mentions[key] ?? []).map { MentionMark(seq: $0.seq, time: $0.time) })
    }

    /// Takes a replica's copy of `user`'s state in `channel` (never persisted from here).
    public func replace(_ user: UserID, _ channel: ChannelID, with state: PositionState) {
        let key = Key(user, channel)
        entries.change(key, default: Entry(position: state.position)) { $0.position = state.position }
        mentions[key] = state.mentions.isEmpty ? nil : state.mentions.map { (seq: $0.seq, time: $0.time) }
    }

    /// Forgets a user's state in a channel (left the server, channel deleted).
    public func forget(_ user: UserID, _ channel: ChannelID) {
        entries.removeValue(forKey: Key(user, channel))
        mentions.removeValue(forKey: Key(user, channel))
    }

    /// Forgets every user's state in a deleted channel (rare: a walk over all positions).
    public func forgetChannel(_ channel: ChannelID) {
        entries = entries.filter { $0.key.channel != channel }
        mentions = mentions.filter { $0.key.channel != channel }
        dirty.removeAll { $0.channel == channel }
    }

    public func unread(_ user: UserID, channel: ChannelRecord, now: UInt64, displayCap: UInt64, mentionWindowMs: UInt64) -> UnreadState {
        let key = Key(user, channel.id)
        let p = stored(key) ?? ReadPosition()
        let floor = now > mentionWindowMs ? now - mentionWindowMs : 0
        // Most channels have no pending mentions at all: skip the second lookup then.
        let mentioned = mentions.isEmpty ? 0 : mentions[key]?.reduce(0) {
            $0 + ($1.seq > p.readSeq && $1.time >= floor && !channel.removed.contains($1.seq) ? 1 : 0)
        } ?? 0
        return UnreadState(serverID: channel.serverID, channelID: channel.id,
                           unreadCount: PositionState.unreadCount(lastSeq: channel.lastSeq, removed: channel.removed, after: p.readSeq),
                           maxCount: displayCap, mentionedCount: UInt64(mentioned), ackTimestamp: p.ackTime,
                           lastMsgTime: channel.lastMessageTime, lastSeq: channel.lastSeq, readSeq: p.readSeq)
    }

    /// The positions changed since the last call, to write in one job.
    public func takeDirty() -> [(Key, ReadPosition)] {
        defer { dirty.removeAll(keepingCapacity: true) }
        return dirty.compactMap { k in
            var taken: ReadPosition?
            // A key listed twice (forgotten and made again in between) is taken once.
            _ = entries.change(k) { e in
                guard e.dirty else { return }
                e.dirty = false
                taken = e.position
            }
            return taken.map { (k, $0) }
        }
    }

    /// Positions taken to write whose commit failed: the next take writes them
    /// again (as they are then), so memory and disk meet once the disk takes writes.
    public func unwritten(_ keys: [Key], received: [Key]) {
        for k in keys where markDirty(k) { dirty.append(k) }
        dirtyReceived.formUnion(received)
    }

    private func pruneMentions(_ key: Key, through seq: UInt64) {
        guard var list = mentions[key] else { return }
        list.removeAll { $0.seq <= seq }
        mentions[key] = list.isEmpty ? nil : list
    }
}
