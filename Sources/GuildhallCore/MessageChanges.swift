// What can happen to a message after it is sent (docs/features.md): a reply's
// reference, thread counts, edits, recall and delete (both leave a
// tombstone: the body is gone, who removed it and when stay), quick
// comments (reactions), and each channel's removed seqs, which unread
// arithmetic subtracts. Pure values.

/// The message a reply refers to, as it was when the reply was sent.
public struct ReplyRef: Sendable, Codable, Equatable {
    public var uid: MessageUID
    public var sender: UserID
    /// The start of its text (or its custom type in brackets), enough to render the quote.
    public var excerpt: String

    public init(uid: MessageUID, sender: UserID, excerpt: String) {
        self.uid = uid; self.sender = sender; self.excerpt = excerpt
    }

    public static let excerptCharacters = 80

    public init(of m: MessageRecord) {
        let excerpt = switch m.content {
        case .text(let t): String(t.prefix(Self.excerptCharacters))
        case .custom(let type, _): "[\(type)]"
        }
        self.init(uid: m.uid, sender: m.sender, excerpt: excerpt)
    }
}

public enum RemovalKind: Int, Sendable, Codable, Equatable {
    case recalled = 1
    case deleted = 2
}

/// A tombstone: the message's body is gone.
public struct Removal: Sendable, Codable, Equatable {
    public var kind: RemovalKind
    public var by: UserID
    public var time: UInt64

    public init(kind: RemovalKind, by: UserID, time: UInt64) { self.kind = kind; self.by = by; self.time = time }
}

/// One reaction type on a message, as one viewer sees it.
public struct ReactionCount: Sendable, Codable, Equatable {
    public var type: UInt32
    public var count: UInt32
    /// Whether the viewer is among those who reacted.
    public var mine: Bool

    public init(type: UInt32, count: UInt32, mine: Bool) { self.type = type; self.count = count; self.mine = mine }
}

/// A message's state after its send; empty for a message nothing happened to.
public struct MessageChanges: Sendable, Codable, Equatable {
    public var editedTime: UInt64 = 0
    public var editCount: UInt32 = 0
    public var removal: Removal?
    public var threadReplies: UInt32 = 0
    public var threadLastReply: UInt64 = 0
    /// By type, ascending.
    public var reactions: [ReactionCount] = []

    public init() {}
}

/// A channel's removed (recalled or deleted) seqs, ascending: unread counts
/// leave them out with one binary search, so no member's row changes.
public struct RemovedSeqs: Sendable, Codable, Equatable {
    public private(set) var seqs: [UInt64] = []

    public init(_ seqs: [UInt64] = []) { self.seqs = seqs.sorted() }

    public var isEmpty: Bool { seqs.isEmpty }

    public mutating func insert(_ seq: UInt64) {
        let i = index(after: seq &- 1)
        if i < seqs.count, seqs[i] == seq { return }
        seqs.insert(seq, at: i)
    }

    /// How many removed seqs are above `seq`: O(log n).
    public func count(after seq: UInt64) -> UInt64 { UInt64(seqs.count - index(after: seq)) }

    public func contains(_ seq: UInt64) -> Bool {
        let i = index(after: seq &- 1)
        return i < seqs.count && seqs[i] == seq
    }

    /// The first index whose seq is above `seq`.
    private func index(after seq: UInt64) -> Int {
        var lo = 0, hi = seqs.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if seqs[mid] <= seq { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}
