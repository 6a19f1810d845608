// Group read receipts of one channel (docs/architecture.md, docs/features.md),
// stored as per-member read cursors: a member's response to messages up to
// seq s moves that member's cursor to s, recorded as one advance. Storage
// grows with advances, never with members × messages. Also the channel's
// messages with a receipt request, in seq order. Pure value; no I/O.
//
// The two questions a receipt view asks stay cheap at any size:
// - "read by k": advances are disjoint per member, so the readers of s are
//   the advances with from < s <= to: (advances starting below s) minus
//   (advances ending below s), two Fenwick trees over seqs (O(log seqs));
// - "who read it, newest first": each advance is listed under the blocks of
//   seqs it covers, in time order, so a page walks one block's list backwards
//   and keeps the advances that cover s (each member at most once).
//
// The response window: an advance starts no lower than the highest message
// already closed to responses (`floor`), so a late jump of the cursor never
// makes anyone a reader of a closed message.

public struct ChannelReceipts: Sendable {
    /// One member's cursor moving to `to` (inclusive), covering the seqs
    /// after `from`, at `time`.
    public struct Advance: Sendable, Codable, Equatable {
        public let user: UserID
        public let from: UInt64
        public let to: UInt64
        public let time: UInt64
        public init(user: UserID, from: UInt64, to: UInt64, time: UInt64) {
            self.user = user; self.from = from; self.to = to; self.time = time
        }
    }

    /// A reader of a message and when the message was first covered.
    public struct Reader: Sendable, Codable, Equatable {
        public let user: UserID
        public let time: UInt64
    }

    /// A message of the channel whose sender asked for receipts.
    public struct Request: Sendable, Codable, Equatable {
        public let uid: MessageUID
        public let seq: UInt64
        public let requester: UserID
        /// The message's sent time: the response window runs from it.
        public let sentTime: UInt64
        public init(uid: MessageUID, seq: UInt64, requester: UserID, sentTime: UInt64) {
            self.uid = uid; self.seq = seq; self.requester = requester; self.sentTime = sentTime
        }
    }

    /// Where the next page of readers starts (opaque to clients).
    public typealias PageCursor = UInt64

    static let blockBits = 6

    public private(set) var advances: [Advance] = []
    /// Per advance: the same member's previous advance (-1: none).
    private var previous: [Int32] = []
    private var members: [UserID: (cursor: UInt64, last: Int32)] = [:]
    private var starts = FenwickCounts()
    private var ends = FenwickCounts()
    /// Block of seqs (seq >> blockBits) -> indexes into `advances` that cover part of it, oldest first.
    private var blocks: [[Int32]] = []
    /// Requested messages, by seq.
    public private(set) var requests: [Request] = []

    public init() {}

    /// Entries of the in-memory reader index (4 bytes each): an advance is
    /// listed under every block of 64 seqs it covers.
    public var indexEntries: Int { blocks.reduce(0) { $0 + $1.count } }

    /// Members who responded at least once.
    public var respondents: Int { members.count }

    /// The member's cursor: no response can cover a seq up to it again.
    public func cursor(of user: UserID) -> UInt64 { members[user]?.cursor ?? 0 }

    /// Records a response up to `seq`; seqs up to `floor` are closed and not
    /// covered. Returns the advance, or nil when nothing new is covered
    /// (responding twice is a no-op).
    @discardableResult
    public mutating func respond(_ user: UserID, upTo seq: UInt64, floor: UInt64 = 0, at time: UInt64) -> Advance? {
        guard let advance = responding(user, upTo: seq, floor: floor, at: time) else { return nil }
        apply(advance)
        return advance
    }

    /// The advance `respond` would make, without making it (to store it first; `load` applies it).
    public func responding(_ user: UserID, upTo seq: UInt64, floor: UInt64 = 0, at time: UInt64) -> Advance? {
        let from = max(cursor(of: user), floor)
        guard seq > from else { return nil }
        return Advance(user: user, from: from, to: seq, time: time)
    }

    /// Replays a stored advance (startup), in the order they were made.
    public mutating func load(_ advance: Advance) {
        guard advance.to > cursor(of: advance.user), advance.from < advance.to else { return }
        apply(Advance(user: advance.user, from: max(advance.from, cursor(of: advance.user)), to: advance.to, time: advance.time))
    }

    private mutating func apply(_ a: Advance) {
        starts.add(1, at: a.from + 1)
        ends.add(1, at: a.to)
        let index = Int32(advances.count)
        previous.append(members[a.user]?.last ?? -1)
        members[a.user] = (a.to, index)
        advances.append(a)
        let first = Int((a.from + 1) >> Self.blockBits), last = Int(a.to >> Self.blockBits)
        if blocks.count <= last { blocks.append(contentsOf: repeatElement([], count: last + 1 - blocks.count)) }
        for b in first...last { blocks[b].append(index) }
    }

    /// Members who have read `seq`.
    public func readerCount(of seq: UInt64) -> Int {
        guard seq > 0 else { return 0 }
        return starts.prefix(seq) - ends.prefix(seq - 1)
    }

    /// Whether the member's responses cover `seq`.
    public func hasRead(_ user: UserID, _ seq: UInt64) -> Bool {
        var i = members[user]?.last ?? -1
        while i >= 0 {
            let a = advances[Int(i)]
            if a.to < seq { return false }
            if a.from < seq { return true }
            i = previous[Int(i)]
        }
        return false
    }

    /// Readers of `seq`, newest first, at most `limit`; pass the returned
    /// cursor to get the next page (nil: no more; a cursor may lead to an empty page).
    public func readers(of seq: UInt64, after page: PageCursor? = nil, limit: Int) -> ([Reader], PageCursor?) {
        let b = Int(seq >> Self.blockBits)
        guard seq > 0, b < blocks.count, limit > 0 else { return ([], nil) }
        let list = blocks[b]
        var i = page.map { min(Int($0), list.count) - 1 } ?? list.count - 1
        var out: [Reader] = []
        while i >= 0 && out.count < limit {
            let a = advances[Int(list[i])]
            if a.from < seq && seq <= a.to { out.append(Reader(user: a.user, time: a.time)) }
            i -= 1
        }
        // A full page may be followed by more (possibly an empty last page):
        // finding out would cost a walk over the rest of the block.
        return (out, out.count == limit && i >= 0 ? PageCursor(i + 1) : nil)
    }

    // MARK: Requests

    /// Records a receipt request; false when the message was requested already.
    @discardableResult
    public mutating func addRequest(_ r: Request) -> Bool {
        let at = insertionIndex(of: r.seq)
        if at < requests.count && requests[at].seq == r.seq { return false }
        requests.insert(r, at: at)
        return true
    }

    public func request(at seq: UInt64) -> Request? {
        let at = insertionIndex(of: seq)
        return at < requests.count && requests[at].seq == seq ? requests[at] : nil
    }

    /// Requested messages with `from < seq <= to`.
    public func requests(after from: UInt64, through to: UInt64) -> ArraySlice<Request> {
        requests[insertionIndex(of: from + 1)..<insertionIndex(of: to + 1)]
    }

    /// The highest seq of a requested message sent before `cutoff`: responses no longer cover it or anything before it.
    public func closedSeq(sentBefore cutoff: UInt64) -> UInt64 {
        // Sent times grow with seq in a channel.
        var lo = 0, hi = requests.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if requests[mid].sentTime < cutoff { lo = mid + 1 } else { hi = mid }
        }
        return lo == 0 ? 0 : requests[lo - 1].seq
    }

    /// First index whose seq is at least `seq`.
    private func insertionIndex(of seq: UInt64) -> Int {
        var lo = 0, hi = requests.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if requests[mid].seq < seq { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}

/// Counts per seq with prefix sums in O(log n); grows as seqs grow.
struct FenwickCounts: Sendable {
    private var tree: [Int] = [0]

    mutating func add(_ delta: Int, at seq: UInt64) {
        let n = Int(seq)
        if n >= tree.count { grow(to: n) }
        var i = n
        while i < tree.count {
            tree[i] += delta
            i += i & -i
        }
    }

    /// Sum of counts at seqs 1...seq.
    func prefix(_ seq: UInt64) -> Int {
        var i = min(Int(seq), tree.count - 1)
        var sum = 0
        while i > 0 {
            sum += tree[i]
            i -= i & -i
        }
        return sum
    }

    /// Rebuilds for seqs up to at least `n` (doubling), keeping the counts.
    private mutating func grow(to n: Int) {
        var size = max(64, tree.count)
        while size <= n { size *= 2 }
        var values = [Int](repeating: 0, count: size)
        for s in 1..<tree.count { values[s] = prefix(UInt64(s)) - prefix(UInt64(s - 1)) }
        tree = [Int](repeating: 0, count: size)
        for s in 1..<values.count where values[s] != 0 {
            var i = s
            while i < size {
                tree[i] += values[s]
                i += i & -i
            }
        }
    }
}
