// Direct conversations (docs/features.md): one per pair of users, or a group
// of 3 to 10 with a name; its message tail, and per side (member) the
// receipt state that decides the sent status of the others' messages, by
// arithmetic (docs/architecture.md):
// - delivered: the highest seq of the others' messages a session of mine received;
// - read by time: the others' messages sent at or before `readTime` are read,
//   and `readCount` of them are, for the unread count;
// - read one by one: messages above the read time acknowledged singly.
// A message's status to its sender is the least advanced of its recipients'
// (read once every one read it); `receipts` counts them for "read by k of N".
// A group's members change: one who joins starts with everything before
// read (their side's read time and count are the conversation's tail), and
// the messages of one who left still count in everyone's unread
// (`formerSent`), so no count moves when someone leaves or comes back.
// Pure value; no I/O.

public struct DirectConversation: Sendable, Equatable {
    /// What one user has received and read of the other's messages.
    public struct Side: Sendable, Codable, Equatable {
        public var user: UserID
        /// Messages this user sent.
        public var sentCount: UInt64 = 0
        /// Highest seq of the peer's messages a session of this user received.
        public var deliveredSeq: UInt64 = 0
        /// The peer's messages sent at or before this time are read.
        public var readTime: UInt64 = 0
        /// How many of the peer's messages are read (for the unread count).
        public var readCount: UInt64 = 0
        /// The peer's messages read one by one above `readTime`: UID -> sent time.
        public var readSingly: [MessageUID: UInt64] = [:]

        public init(user: UserID) { self.user = user }
    }

    public let id: UInt64
    public let createdAt: UInt64
    /// The sides, by user id ascending: two for a pair, 3 to 10 for a group.
    public var sides: [Side]
    /// A group's: its name and its owner (who adds and removes members). Empty for a pair.
    public var name = ""
    public var owner: UserID = ""
    /// A group's: members other than the owner may add members.
    public var membersMayAdd = false
    public let isGroup: Bool
    /// Messages counted for unread whose senders left the group, by sender
    /// (one who comes back takes their count back).
    public var formerSent: [UserID: UInt64] = [:]
    /// Seq and sent time of the newest message committed.
    public var lastSeq: UInt64 = 0
    public var lastMessageTime: UInt64 = 0
    /// Seq handed to the last send (committed or not).
    var nextSeq: UInt64 = 0
    /// Its row committed. One opened by a request still in flight is held
    /// (so a second send to the same peer takes the same id) but not listed:
    /// if the store refuses the row, nobody saw it.
    public var stored = true

    public init(id: UInt64, users: (UserID, UserID), createdAt: UInt64) {
        self.id = id
        self.createdAt = createdAt
        let (a, b) = users.0 < users.1 ? users : (users.1, users.0)
        sides = [Side(user: a), Side(user: b)]
        isGroup = false
    }

    /// A group of `members` (3 to 10, the owner among them; the caller checked).
    public init(group id: UInt64, name: String, owner: UserID, members: [UserID], membersMayAdd: Bool = false, createdAt: UInt64) {
        self.id = id
        self.createdAt = createdAt
        self.name = name
        self.owner = owner
        self.membersMayAdd = membersMayAdd
        sides = Set(members).sorted().map { Side(user: $0) }
        isGroup = true
    }

    /// How many a new group has (its creator among them), and the most one may grow to.
    public static let groupSizes = 3...10
    /// The longest group name, in characters.
    public static let maxNameLength = 100

    /// A pair's two users, the lower first.
    public var users: (UserID, UserID) { (sides[0].user, sides[1].user) }

    /// Every member, ascending.
    public var members: [UserID] { sides.map(\.user) }

    public func includes(_ user: UserID) -> Bool { position(user) != nil }

    /// A pair's other user.
    public func peer(of user: UserID) -> UserID { sides[0].user == user ? sides[1].user : sides[0].user }

    /// Everyone in the conversation but `user`: who a message of theirs goes to.
    public func others(of user: UserID) -> [UserID] { sides.lazy.map(\.user).filter { $0 != user } }

    /// The side of `user` (who must be in the conversation).
    public func side(_ user: UserID) -> Side { sides[index(user)] }

    private func position(_ user: UserID) -> Int? {
        if sides.count == 2 { return sides[0].user == user ? 0 : sides[1].user == user ? 1 : nil }
        return sides.firstIndex { $0.user == user }
    }

    func index(_ user: UserID) -> Int { position(user)! }

    /// Messages that count for `user`'s unread: everyone else's, those of members who left included.
    public func sentByOthers(of user: UserID) -> UInt64 {
        sides.reduce(formerSent.values.reduce(0, +)) { $1.user == user ? $0 : $0 + $1.sentCount }
    }

    /// The others' messages `user` has not read.
    public func unread(for user: UserID) -> UInt64 {
        guard let i = position(user) else { return 0 }
        let sent = sentByOthers(of: user)
        return sent > sides[i].readCount ? sent - sides[i].readCount : 0
    }

    /// Whether `user` may add members: a group's owner, or any member when the group allows it.
    public func mayAdd(_ user: UserID) -> Bool { isGroup && includes(user) && (owner == user || membersMayAdd) }

    // MARK: Membership (groups)

    /// `users` join, each with everything sent before read. Returns their new sides (to store).
    public mutating func admit(_ users: [UserID], now: UInt64) -> [Side] {
        let readTime = max(now, lastMessageTime)
        var added: [Side] = []
        for user in Set(users).sorted() where !includes(user) {
            var side = Side(user: user)
            side.sentCount = formerSent.removeValue(forKey: user) ?? 0
            side.readTime = readTime
            side.readCount = sentByOthers(of: user)
            side.deliveredSeq = lastSeq
            added.append(side)
        }
        sides = (sides + added).sorted { $0.user < $1.user }
        return added
    }

    /// `user` leaves: their messages still count for the others' unread. An
    /// owner who leaves passes the group to the member first by id.
    public mutating func dismiss(_ user: UserID) {
        guard let i = position(user) else { return }
        if sides[i].sentCount > 0 { formerSent[user, default: 0] += sides[i].sentCount }
        sides.remove(at: i)
        if owner == user { owner = sides.first?.user ?? "" }
    }

    /// Where a message of `sender` is, as its sender sees it: read once every recipient read it, delivered once every one received it.
    public func status(ofMessageBy sender: UserID, uid: MessageUID, seq: UInt64, sentTime: UInt64) -> SentStatus {
        let (delivered, read, of) = receipts(ofMessageBy: sender, uid: uid, seq: seq, sentTime: sentTime)
        return SentStatus(delivered: delivered, read: read, of: of)
    }

    /// How many of a message's recipients received it, and read it (a member who read it received it), of how many.
    public func receipts(ofMessageBy sender: UserID, uid: MessageUID, seq: UInt64, sentTime: UInt64) -> (delivered: Int, read: Int, of: Int) {
        var delivered = 0, read = 0
        for s in sides where s.user != sender {
            if sentTime <= s.readTime || s.readSingly[uid] != nil {
                read += 1
                delivered += 1
            } else if seq <= s.deliveredSeq {
                delivered += 1
            }
        }
        return (delivered, read, sides.count - 1)
    }

    // MARK: Changes

    /// Seq and time for a new message (the time never goes back in a conversation).
    public mutating func append(now: UInt64) -> (seq: UInt64, time: UInt64) {
        nextSeq = max(nextSeq, lastSeq) + 1
        return (nextSeq, max(now, lastMessageTime))
    }

    /// A message of `sender` is stored (`withheld`: its recipient blocks the sender, so it counts for no one's unread).
    public mutating func committed(by sender: UserID, seq: UInt64, time: UInt64, withheld: Bool = false) {
        stored = true
        if !withheld {
            // A sender who left while the message was being stored counts as one who left.
            if let s = position(sender) { sides[s].sentCount += 1 } else { formerSent[sender, default: 0] += 1 }
        }
        lastSeq = max(lastSeq, seq)
        lastMessageTime = max(lastMessageTime, time)
    }

    /// A message of `sender` sent at `sentTime` was recalled or deleted: it
    /// counts for no one any more. Returns the sides whose read count moved (to store).
    public mutating func removed(by sender: UserID, sentTime: UInt64) -> [Side] {
        let s = position(sender)
        if let s { if sides[s].sentCount > 0 { sides[s].sentCount -= 1 } } else if let n = formerSent[sender], n > 0 { formerSent[sender] = n - 1 }
        var moved: [Side] = []
        for r in sides.indices where r != s && sentTime <= sides[r].readTime && sides[r].readCount > 0 {
            sides[r].readCount -= 1
            moved.append(sides[r])
        }
        return moved
    }

    /// `user` received the peer's messages up to `seq`; false when nothing moved.
    public mutating func delivered(to user: UserID, upTo seq: UInt64) -> Bool {
        guard let i = position(user), seq > sides[i].deliveredSeq else { return false }
        sides[i].deliveredSeq = seq
        return true
    }

    /// `user` read the peer's messages sent at or before `time`, `count` of
    /// them; false when the read time does not move.
    public mutating func read(by user: UserID, upTo time: UInt64, count: UInt64) -> Bool {
        guard let i = position(user), time > sides[i].readTime else { return false }
        sides[i].readTime = time
        sides[i].readCount = max(sides[i].readCount, count)
        sides[i].readSingly = sides[i].readSingly.filter { $0.value > time }
        return true
    }

    /// `user` read everything the others sent up to `now`.
    public mutating func readAll(by user: UserID, now: UInt64) -> Bool {
        guard let i = position(user) else { return false }
        let othersSent = sentByOthers(of: user)
        let moved = read(by: user, upTo: max(now, lastMessageTime), count: othersSent)
        sides[i].readCount = othersSent
        return moved
    }

    /// `user` read one message of the peer; false when it counted as read already.
    public mutating func readOne(by user: UserID, uid: MessageUID, sentTime: UInt64) -> Bool {
        guard let i = position(user), sentTime > sides[i].readTime, sides[i].readSingly[uid] == nil else { return false }
        sides[i].readSingly[uid] = sentTime
        return true
    }

    /// Takes a side's receipts decided on `before`, once stored: delivered
    /// and read marks never go back, and the read count moves by what the
    /// decision added, so a removal that committed meanwhile still counts.
    public mutating func takeReceipts(_ after: Side, decidedOn before: Side) {
        // One who left while their receipts were being stored has no side to take them.
        guard let i = position(after.user) else { return }
        var side = sides[i]
        side.deliveredSeq = max(side.deliveredSeq, after.deliveredSeq)
        side.readTime = max(side.readTime, after.readTime)
        side.readCount += after.readCount > before.readCount ? after.readCount - before.readCount : 0
        for (uid, time) in after.readSingly where before.readSingly[uid] == nil { side.readSingly[uid] = time }
        side.readSingly = side.readSingly.filter { $0.value > side.readTime }
        sides[i] = side
    }

    /// Restores a stored side (startup).
    public mutating func load(_ side: Side) {
        guard let i = position(side.user) else { return }
        let sent = sides[i].sentCount
        sides[i] = side
        sides[i].sentCount = sent
    }

    public mutating func loadTail(sender: UserID, count: UInt64, lastSeq: UInt64, lastTime: UInt64) {
        if let i = position(sender) { sides[i].sentCount = count } else if count > 0 { formerSent[sender] = count }
        self.lastSeq = max(self.lastSeq, lastSeq)
        lastMessageTime = max(lastMessageTime, lastTime)
    }
}

/// Where a direct message is, as its sender sees it.
public enum SentStatus: Int, Sendable {
    case sent = 2, delivered = 3, read = 4

    /// Read once every recipient read it, delivered once every one received it.
    public init(delivered: Int, read: Int, of recipients: Int) {
        self = read == recipients ? .read : delivered == recipients ? .delivered : .sent
    }
}

/// Every direct conversation, by id and by user.
public struct DirectConversations: Sendable {
    public private(set) var byID: [UInt64: DirectConversation] = [:]
    private var byPair: [String: UInt64] = [:]
    private var byUser: [UserID: Set<UInt64>] = [:]
    /// Who blocks whom (BlockUser), held with the pair's conversation, whether or not it is opened.
    private var blocking: Set<String> = []
    private var blockedBy: [UserID: Set<UserID>] = [:]

    public init() {}

    public subscript(id: UInt64) -> DirectConversation? {
        get { byID[id] }
        set { byID[id] = newValue }
    }

    /// The conversation of two users, if opened.
    public func between(_ a: UserID, _ b: UserID) -> DirectConversation? {
        byPair[Self.pairKey(a, b)].flatMap { byID[$0] }
    }

    /// The user's conversations whose rows are stored.
    public func conversations(of user: UserID) -> [DirectConversation] {
        (byUser[user] ?? []).compactMap { byID[$0] }.filter(\.stored)
    }

    /// Everyone the user shares a stored conversation with (a group's members too), each once.
    public func peers(of user: UserID) -> [UserID] {
        var seen: Set<UserID> = []
        return conversations(of: user).flatMap { $0.others(of: user) }.filter { seen.insert($0).inserted }
    }

    /// Whether the user has a conversation held here (stored or not).
    public func hasConversations(_ user: UserID) -> Bool { byUser[user]?.isEmpty == false }

    public mutating func add(_ c: DirectConversation) {
        if let old = byID[c.id] { for user in old.members where !c.includes(user) { byUser[user]?.remove(c.id) } }
        byID[c.id] = c
        if !c.isGroup { byPair[Self.pairKey(c.users.0, c.users.1)] = c.id }
        for user in c.members { byUser[user, default: []].insert(c.id) }
    }

    /// Whether `blocker` blocks `user`: `user`'s direct messages to `blocker` are withheld, and `blocker` may not write to `user`.
    public func blocks(_ blocker: UserID, _ user: UserID) -> Bool { !blocking.isEmpty && blocking.contains(blocker + "\u{0}" + user) }

    /// Whether `sender`'s messages in `c` are withheld from their peer.
    public func isWithheld(from c: DirectConversation, sender: UserID) -> Bool { blocks(c.peer(of: sender), sender) }

    /// The users `blocker` blocks, among the pairs held here.
    public func blocked(by blocker: UserID) -> Set<UserID> { blockedBy[blocker] ?? [] }

    public mutating func setBlock(_ blocker: UserID, _ user: UserID, _ on: Bool) {
        if on {
            blocking.insert(blocker + "\u{0}" + user)
            blockedBy[blocker, default: []].insert(user)
        } else {
            blocking.remove(blocker + "\u{0}" + user)
            blockedBy[blocker]?.remove(user)
            if blockedBy[blocker]?.isEmpty == true { blockedBy[blocker] = nil }
        }
    }

    /// Forgets the blocks of the pairs `drop` picks (their shard moved to another node; a later take-over loads them again).
    public mutating func forgetBlocks(where drop: (UserID, UserID) -> Bool) {
        for (blocker, users) in blockedBy {
            for user in users where drop(blocker, user) { setBlock(blocker, user, false) }
        }
    }

    /// A key no two pairs share (user ids hold no control characters).
    static func pairKey(_ a: UserID, _ b: UserID) -> String { a < b ? a + "\u{0}" + b : b + "\u{0}" + a }
}
