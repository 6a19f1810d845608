// Received status per message and user (docs/features.md): isRead, isListened,
// isDownloaded, isRetrieved, the same on every device of the user. Setting
// flags commits them with an inbox row, then tells the user's other
// sessions; a device that was offline gets the row in its sync. Reading
// and delivery set flags too, without a row per message: a
// channel message at or below the user's read position is read (and so
// retrieved), and retrieved at or below the highest seq a device
// acknowledged receiving (`Ack.received`, per channel); a direct message is retrieved once a device of the user said
// it was delivered (MarkDelivered) and read once a read receipt covered it.
// Asking gathers the user's home's rows and every home's derivations. Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

/// Received status requests, at the user's home (setting) and at every home (asking).
final class ReceivedStatuses: HomePart {
    unowned let services: HomeServices
    /// Direct conversations: a direct message's flags follow from its receipts.
    private unowned let userHome: UserHome

    init(services: HomeServices, userHome: UserHome) {
        self.services = services
        self.userHome = userHome
    }
}

extension ReceivedStatuses {
    func setReceivedStatus(_ r: GHSetReceivedStatus, id: UInt64, from s: HomeSession) {
        guard !r.messageUids.isEmpty, r.messageUids.count <= Limits.maxIdsPerRequest else {
            s.fail(id, Failure(.limitReached, "between 1 and \(Limits.maxIdsPerRequest) message UIDs per request"))
            return
        }
        let flags = ReceivedFlags(r)
        guard !flags.isEmpty else {
            s.fail(id, Failure(.badRequest, "set at least one of is_read, is_listened, is_downloaded, is_retrieved"))
            return
        }
        var seen = Set<MessageUID>()
        let uids = r.messageUids.filter { seen.insert($0).inserted }
        var list = GHReceivedStatusList()
        list.statuses = uids.map { GHReceivedStatus(uid: $0, flags) }
        let copy = EventCopy(.receivedStatus(list))
        let item = AddressedItem(user: s.user, stored: .event(copy), live: .pushExceptOrigin(copy, origin: s.key))
        runner.carryOut(Effects(writes: uids.map { .receivedStatus(s.user, $0, flags) }, addressed: [item],
                                reply: .result(.receivedStatuses(list))),
                        answering: id, to: s)
    }

    func getReceivedStatus(_ r: GHGetReceivedStatus, id: UInt64, from s: HomeSession) {
        guard r.messageUids.count <= Limits.maxIdsPerRequest else {
            s.fail(id, Failure(.limitReached, "at most \(Limits.maxIdsPerRequest) message UIDs per request"))
            return
        }
        let holdsRows = services.place(user: s.user) == services.index
        read(.messages(uids: r.messageUids)) { messages in
            var derived = Dictionary(messages.messages.map { ($0.uid, self.derivedFlags($0, for: s.user)) }) { a, _ in a }
            guard holdsRows else { return self.answer(r.messageUids, derived, id: id, to: s) }
            self.read(.receivedStatus(user: s.user, uids: r.messageUids)) { result in
                if result.error != nil || messages.error != nil {
                    return s.fail(id, Failure(.unavailable, "storage is unavailable; retry later"))
                }
                for (uid, flags) in zip(r.messageUids, result.statuses) { derived[uid, default: []].formUnion(flags) }
                self.answer(r.messageUids, derived, id: id, to: s)
            }
        }
    }

    private func answer(_ uids: [MessageUID], _ flags: [MessageUID: ReceivedFlags], id: UInt64, to s: HomeSession) {
        var list = GHReceivedStatusList()
        list.statuses = uids.map { GHReceivedStatus(uid: $0, flags[$0] ?? []) }
        s.respond(id, .receivedStatuses(list))
    }

    /// What reading and delivery say of `m` for `user`, where this home holds its channel or conversation.
    private func derivedFlags(_ m: MessageRecord, for user: UserID) -> ReceivedFlags {
        if m.serverID != 0 {
            guard let c = directory.channel(m.channelID), directory.canView(user, c) else { return [] }
            if positions.position(user, c.id).readSeq >= m.seq { return [.read, .retrieved] }
            return positions.receivedSeq(user, c.id) >= m.seq ? [.retrieved] : []
        }
        guard let c = userHome.directs[m.channelID], c.includes(user), m.sender != user else { return [] }
        let side = c.side(user)
        var flags: ReceivedFlags = []
        if side.deliveredSeq >= m.seq { flags.insert(.retrieved) }
        if side.readTime >= m.sentTime || side.readSingly[m.uid] != nil { flags.formUnion([.read, .retrieved]) }
        return flags
    }
}

extension ReceivedFlags {
    init(_ r: GHSetReceivedStatus) {
        self = []
        if r.isRead { insert(.read) }
        if r.isListened { insert(.listened) }
        if r.isDownloaded { insert(.downloaded) }
        if r.isRetrieved { insert(.retrieved) }
    }
}

extension GHReceivedStatus {
    init(uid: MessageUID, _ flags: ReceivedFlags) {
        self.init()
        messageUid = uid
        isRead = flags.contains(.read)
        isListened = flags.contains(.listened)
        isDownloaded = flags.contains(.downloaded)
        isRetrieved = flags.contains(.retrieved)
    }
}
