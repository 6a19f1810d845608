// Group read receipts of one channel, stored as per-member read cursors
// (DESIGN §6, MISSION §6.1 and §10): a member's response to messages up to
// seq s moves that member's cursor to s, recorded as one advance. Storage
// grows with advances, never with members × messages. Pure value; no I/O.
//
// The two questions a receipt view asks stay cheap at any size:
// - "read by k": the number of cursors at or past s, from a Fenwick tree
//   over seqs (O(log seqs));
// - "who read it, newest first": each advance is listed under the blocks of
//   seqs it covers, in time order, so a page walks one block's list backwards
//   and keeps the advances that cover s (each member at most once, since a
//   cursor passes a seq once).

public struct ChannelReceipts: Sendable {
    /// One member's cursor moving from `from` (exclusive) to `to` (inclusive) at `time`.
    public struct Advance: Sendable, Equatable {
        public let user: UserID
        public let from: UInt64
        public let to: UInt64
        public let time: UInt64
        public init(user: UserID, from: UInt64, to: UInt64, time: UInt64) {
            self.user = user; self.from = from; self.to = to; self.time = time
        }
    }

    /// A reader of a message and when the message was first covered.
    public struct Reader: Sendable, Equatable {
        public let user: UserID
        public let time: UInt64
    }

    /// Where the next page of readers starts (opaque to clients).
    public typealias PageCursor = UInt64

    static let blockBits = 6

    public private(set) var advances: [Advance] = []
    private var cursors: [UserID: UInt64] = [:]
    private var counts = FenwickCounts()
    /// Block of seqs (seq >> blockBits) -> indexes into `advances` that cover part of it, oldest first.
    private var blocks: [[Int32]] = []

    public init() {}

    /// Entries of the in-memory reader index (4 bytes each): an advance is
    /// listed under every block of 64 seqs it covers.
    public var indexEntries: Int { blocks.reduce(0) { $0 + $1.count } }

    /// Members who responded at least once.
    public var respondents: Int { cursors.count }

    /// The member's cursor: every seq up to it is read.
    public func cursor(of user: UserID) -> UInt64 { cursors[user] ?? 0 }

    /// Records a response up to `seq`; returns the advance, or nil when the
    /// cursor is already there (responding twice is a no-op).
    @discardableResult
    public mutating func respond(_ user: UserID, upTo seq: UInt64, at time: UInt64) -> Advance? {
        let from = cursors[user] ?? 0
        guard seq > from else { return nil }
        let advance = Advance(user: user, from: from, to: seq, time: time)
        apply(advance)
        return advance
    }

    /// Replays a stored advance (startup); advances must come in the order they were made.
    public mutating func load(_ advance: Advance) {
        guard advance.to > (cursors[advance.user] ?? 0) else { return }
        apply(advance)
    }

    private mutating func apply(_ a: Advance) {
        if a.from > 0 { counts.add(-1, at: a.from) }
        counts.add(1, at: a.to)
        cursors[a.user] = a.to
        let index = Int32(advances.count)
        advances.append(a)
        let first = Int((a.from + 1) >> Self.blockBits), last = Int(a.to >> Self.blockBits)
        if blocks.count <= last { blocks.append(contentsOf: repeatElement([], count: last + 1 - blocks.count)) }
        for b in first...last { blocks[b].append(index) }
    }

    /// Members whose cursor is at or past `seq`.
    public func readerCount(of seq: UInt64) -> Int {
        guard seq > 0 else { return cursors.count }
        return cursors.count - counts.prefix(seq - 1)
    }

    public func hasRead(_ user: UserID, _ seq: UInt64) -> Bool { cursor(of: user) >= seq }

    /// Readers of `seq`, newest first, at most `limit`; pass the returned
    /// cursor to get the next page (nil: no more; a cursor may lead to an empty page).
    public func readers(of seq: UInt64, after page: PageCursor? = nil, limit: Int) -> ([Reader], PageCursor?) {
        let b = Int(seq >> Self.blockBits)
        guard seq > 0, b < blocks.count, limit > 0 else { return ([], nil) }
        let list = blocks[b]
        var i = page.map { Int($0) - 1 } ?? list.count - 1
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
