// De-duplication of resends by client-side id (docs/features.md): a resend by the
// same user with the same client id within the window gets the original
// message back. Loop thread only.
//
// Compact on purpose: at 10k sends/s a 300 s window holds 3 M entries, and
// keeping each original message here cost about 405 bytes per message. So
// a committed send is kept as (64-bit hash of sender and client id) -> UID,
// about 40 bytes with the expiry order, and a resend is answered from the
// store by that UID. The stored message's sender and client id are compared
// there, so a hash collision is a miss (a new send), never a wrong answer.
// A send still being committed is kept whole with the resends waiting for it;
// those are few. Expiry walks the order from the front: UIDs carry their time.

import GuildhallCore

struct RecentSends {
    struct Key: Hashable {
        let sender: UserID
        let clientID: String
    }

    /// Where a client id was last seen.
    enum Original {
        /// Committed: answer from the store, if the message there matches.
        case committed(MessageUID)
        /// Being committed: wait for it.
        case inFlight
    }

    /// (sender, client id) to 64 bits; replaceable so tests can make it collide.
    private let hash: (UserID, String) -> UInt64
    private var committed: [UInt64: MessageUID] = [:]
    /// Committed entries in UID order, for expiry.
    private var order: [(hash: UInt64, uid: MessageUID)] = []
    private var head = 0
    /// Sends being committed: resends waiting for each, as (session, request id).
    private var inFlight: [Key: [(HomeSession, UInt64)]] = [:]

    /// Entries held: committed, and being committed.
    var count: (committed: Int, inFlight: Int) { (committed.count, inFlight.count) }

    init(hash: @escaping (UserID, String) -> UInt64 = RecentSends.hash) { self.hash = hash }

    static func hash(_ sender: UserID, _ clientID: String) -> UInt64 {
        var h = Hasher()
        h.combine(sender)
        h.combine(clientID)
        return UInt64(bitPattern: Int64(h.finalize()))
    }

    func lookup(sender: UserID, clientID: String) -> Original? {
        if inFlight[Key(sender: sender, clientID: clientID)] != nil { return .inFlight }
        return committed[hash(sender, clientID)].map { .committed($0) }
    }

    /// A send with this client id is being committed.
    mutating func sending(sender: UserID, clientID: String) {
        inFlight[Key(sender: sender, clientID: clientID), default: []] = []
    }

    /// A send committed before (at startup, from the store).
    mutating func remember(sender: UserID, clientID: String, uid: MessageUID) {
        let h = hash(sender, clientID)
        committed[h] = uid
        order.append((h, uid))
    }

    mutating func wait(sender: UserID, clientID: String, session: HomeSession, id: UInt64) {
        inFlight[Key(sender: sender, clientID: clientID)]?.append((session, id))
    }

    /// The original's commit finished: keeps it when it committed (forgets it
    /// when the commit failed) and returns the resends that waited.
    mutating func settle(_ m: MessageRecord, committed ok: Bool) -> [(HomeSession, UInt64)] {
        let waiters = inFlight.removeValue(forKey: Key(sender: m.sender, clientID: m.clientID)) ?? []
        if ok { remember(sender: m.sender, clientID: m.clientID, uid: m.uid) }
        return waiters
    }

    /// Forgets committed entries made before `cutoff` (Unix ms).
    mutating func expire(before cutoff: UInt64) {
        let floor = UIDGenerator.floor(atMillis: cutoff)
        while head < order.count, order[head].uid < floor {
            let (h, uid) = order[head]
            if committed[h] == uid { committed.removeValue(forKey: h) }
            head += 1
        }
        if head > 1024 && head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
