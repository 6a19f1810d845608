// De-duplication of resends by client-side id (MISSION §3): a resend by the
// same user with the same client id within the window gets the original
// message back. Entries are kept in arrival order so expiry is a walk from
// the front. A resend that arrives while the original is still being
// committed waits for that commit. Loop thread only.

import GuildhallCore

struct RecentSends {
    struct Key: Hashable {
        let sender: UserID
        let clientID: String
    }

    struct Entry {
        var message: MessageRecord
        var committed: Bool
        /// Resends waiting for the original's commit: (session, request id).
        var waiters: [(Session, UInt64)] = []
    }

    private var entries: [Key: Entry] = [:]
    private var order: [(Key, UInt64)] = []
    private var head = 0

    func lookup(sender: UserID, clientID: String) -> Entry? {
        entries[Key(sender: sender, clientID: clientID)]
    }

    mutating func remember(_ m: MessageRecord, committed: Bool) {
        let key = Key(sender: m.sender, clientID: m.clientID)
        entries[key] = Entry(message: m, committed: committed)
        order.append((key, m.sentTime))
    }

    mutating func wait(sender: UserID, clientID: String, session: Session, id: UInt64) {
        entries[Key(sender: sender, clientID: clientID)]?.waiters.append((session, id))
    }

    /// Marks the original committed (or forgets it when the commit failed) and returns its waiters.
    mutating func settle(_ m: MessageRecord, committed: Bool) -> [(Session, UInt64)] {
        let key = Key(sender: m.sender, clientID: m.clientID)
        let waiters = entries[key]?.waiters ?? []
        if committed {
            entries[key]?.committed = true
            entries[key]?.waiters = []
        } else {
            entries.removeValue(forKey: key)
        }
        return waiters
    }

    /// Forgets entries older than `cutoff` (ms).
    mutating func expire(before cutoff: UInt64) {
        while head < order.count, order[head].1 < cutoff {
            let (key, time) = order[head]
            if let e = entries[key], e.committed, e.message.sentTime == time { entries.removeValue(forKey: key) }
            head += 1
        }
        if head > 1024 && head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
