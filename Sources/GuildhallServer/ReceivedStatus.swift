// Received status per message and user (MISSION §7): isRead, isListened,
// isDownloaded, isRetrieved, the same on every device of the user. Setting
// flags commits them with an inbox row, then tells the user's other
// sessions; a device that was offline gets the row in its sync. Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

extension UserHome {
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
                                reply: { .receivedStatuses(list) }),
                        answering: id, to: s)
    }

    func getReceivedStatus(_ r: GHGetReceivedStatus, id: UInt64, from s: HomeSession) {
        guard r.messageUids.count <= Limits.maxIdsPerRequest else {
            s.fail(id, Failure(.limitReached, "at most \(Limits.maxIdsPerRequest) message UIDs per request"))
            return
        }
        read(.receivedStatus(user: s.user, uids: r.messageUids)) { result in
            if result.error != nil {
                s.fail(id, Failure(.unavailable, "storage is unavailable; retry later"))
                return
            }
            var list = GHReceivedStatusList()
            list.statuses = zip(r.messageUids, result.statuses).map { GHReceivedStatus(uid: $0, $1) }
            s.respond(id, .receivedStatuses(list))
        }
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
