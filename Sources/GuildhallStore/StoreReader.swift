// The reader thread: history and lookups on its own connection, beside the
// writer (WAL lets readers run while the writer commits). Each request reads
// in its own implicit transaction, so it sees every commit that happened
// before it was submitted.

import Foundation
import Synchronization
import GuildhallCore

public enum ReadRequest: Sendable, Equatable {
    /// Messages of a channel beside `anchor` (exclusive): older when `after`
    /// is false (anchor 0 = from the newest), newer when true (anchor 0 = from the oldest).
    /// `viewer`: whose reactions count as "mine".
    case history(channel: ChannelID, anchor: UInt64, after: Bool, limit: Int, viewer: UserID = "")
    /// As `history`, beside a time instead of a seq: older than `time`, or newer than it when `after`.
    case historyAtTime(channel: ChannelID, time: UInt64, after: Bool, limit: Int, viewer: UserID = "")
    /// Messages by UID, in the order asked; unknown UIDs are left out.
    case messages(uids: [MessageUID], viewer: UserID = "")
    /// The replies in the thread under `root`, ascending, after seq `after`.
    case thread(root: MessageUID, after: UInt64, limit: Int, viewer: UserID = "")
    /// The last seq of a channel sent at or before `time` (0 when none), in `count`.
    case seqAtTime(channel: ChannelID, time: UInt64)
    /// A sync package: a user's inbox items with `after < ord <= upTo`, at
    /// most `limit`. With `after` nil, the device's cursor is read first
    /// (0 for a device never synced) and returned in `cursor`.
    case inbox(user: UserID, device: DeviceID, after: UInt64?, upTo: UInt64, limit: Int)
    /// A user's received status of messages, in the order asked.
    case receivedStatus(user: UserID, uids: [MessageUID])
    /// How many messages `sender` sent in a direct conversation at or before `upTo` (ms), in `count`.
    case directSentCount(conversation: UInt64, sender: UserID, upTo: UInt64)
    /// A group's messages sent at or before `upTo` by anyone but `reader` (what a read by time covers).
    case groupSentCount(conversation: UInt64, reader: UserID, upTo: UInt64)
    /// Messages matching a search, newest first, with `snippets` beside them (SearchReads.swift).
    case search(MessageSearch)
    /// The bytes of the uploads `user` asked for and did not lose (their file quota's use), in `count`.
    case fileBytes(user: UserID)
    /// The rows of files by id, in `files`; unknown ids are left out.
    case files(ids: [UInt64])
    /// For the sweep, in `files`: rows of uploads no message carries asked for before `unsentBefore`, and of removed messages' files; at most `limit`.
    case sweepableFiles(unsentBefore: UInt64, limit: Int)
    /// How many files messages carry, in `count`, and their bytes, in `bytes`.
    case fileTotals
    /// A page of a server's audit log, in `audit`; `hasMore` when older entries pass its filters.
    case auditLog(AuditQuery)
    /// The first `limit` users who reacted to `message` with `type`, earliest first (`users`), and how many did (`count`).
    case reactors(message: MessageUID, type: UInt32, limit: Int)
}

public struct ReadResult: Sendable {
    public let ticket: UInt64
    /// Ascending seq for history; the order asked for lookups.
    public var messages: [MessageRecord] = []
    public var hasMore = false
    public var error: StoreError?
    /// For `inbox`: the items, by ord; `cursor` is where the package started.
    public var inbox: [InboxItem] = []
    public var cursor: UInt64 = 0
    /// For `receivedStatus`.
    public var statuses: [ReceivedFlags] = []
    /// For `directSentCount`.
    public var count: UInt64 = 0
    /// For `search`: each message's snippet, marked with SearchText's match markers.
    public var snippets: [String] = []
    /// For `files`.
    public var files: [FileRecord] = []
    /// For `fileTotals`.
    public var bytes: UInt64 = 0
    /// For `auditLog`, newest first.
    public var audit: [AuditEntry] = []
    /// For `reactors`.
    public var users: [UserID] = []

    init(ticket: UInt64) { self.ticket = ticket }
}

public final class StoreReader: Sendable {
    /// Each read with the last journal record appended when it was asked (JournalAhead.swift).
    private let queue = JobQueue<(UInt64, ReadRequest, UInt64)>()
    private let ahead: JournalAheadSlot
    private let done = DispatchSemaphore(value: 0)
    /// Statements left busy when the thread ended (a leak; 0 expected).
    let busyAtClose = BusyAtClose()

    /// `indexer`: the search index's thread, whose database the connection attaches (nil while search is off).
    /// `ahead`: the writer's local journal, whose records a read waits for.
    init(path: String, indexer: SearchIndexer?, ahead: JournalAheadSlot, onResult: @escaping @Sendable ([ReadResult]) -> Void) throws(StoreError) {
        self.ahead = ahead
        let db = try SQLiteConnection(path: path, readOnly: true)
        if indexer != nil {
            let index = (path as NSString).deletingLastPathComponent + "/" + SearchIndex.file
            try db.execute("ATTACH DATABASE '\(index.replacingOccurrences(of: "'", with: "''"))' AS idx")
        }
        let connection = ConnectionHandOver(db)
        NamedThread.start("gh-reader") { [queue, done, busyAtClose] in
            do {
                // Closed (at the end of this scope) before `stop()` returns: the last connection folds the WAL away.
                let db = connection.take()
                StoreReader.run(db, indexer: indexer, queue: queue, ahead: ahead, onResult: onResult)
                busyAtClose.record(db.busyStatements)
            }
            done.signal()
        }
    }

    public func submit(ticket: UInt64, _ request: ReadRequest) { queue.push((ticket, request, ahead.current?.lastAppended ?? 0)) }

    public func stop() {
        queue.stop()
        done.wait()
    }

    private static func run(_ db: SQLiteConnection, indexer: SearchIndexer?, queue: JobQueue<(UInt64, ReadRequest, UInt64)>,
                            ahead: JournalAheadSlot, onResult: @Sendable ([ReadResult]) -> Void) {
        let queries: ReaderQueries
        do { queries = try ReaderQueries(db, indexer: indexer) } catch { fatalError("cannot prepare reader statements: \(error)") }
        while true {
            let (jobs, stopping) = queue.takeAll()
            // What was answered as stored before these reads were asked is in SQLite before they run.
            let caughtUp = jobs.map(\.2).max().map { seq in ahead.current?.waitStored(seq) ?? true } ?? true
            onResult(jobs.map { ticket, request, _ -> ReadResult in
                var result = ReadResult(ticket: ticket)
                do throws(StoreError) {
                    guard caughtUp else { throw StoreError(code: -1, message: "the journal's records are not yet in SQLite") }
                    try queries.run(request, into: &result)
                } catch {
                    result = ReadResult(ticket: ticket)
                    result.error = error
                }
                return result
            })
            if stopping && queue.isEmpty { return }
        }
    }
}

final class ReaderQueries {
    private let before, after, byUID, cursor, inbox, received, directCount, groupCount: Statement
    private let threadAfter, reactions, reactorList, reactorCount, timeOfSeq, lastSeq: Statement
    /// Nil while search is off.
    private let search: SearchReads?
    private let fileBytes, fileByID, unsentFiles, removedFiles, fileTotals: Statement
    private let audit: AuditReads

    init(_ db: SQLiteConnection, indexer: SearchIndexer?) throws(StoreError) {
        let cols = MessageRows.readColumns
        audit = try AuditReads(db)
        search = try indexer.map { indexer throws(StoreError) in try SearchReads(db, indexer: indexer) }
        fileBytes = try db.prepare("SELECT COALESCE(SUM(size), 0) FROM files WHERE uploader = ? AND removed = 0")
        let fileColumns = "id, uploader, server_id, channel_id, filename, content_type, size, sha256, created_at, message_uid, removed"
        fileByID = try db.prepare("SELECT \(fileColumns) FROM files WHERE id = ?")
        unsentFiles = try db.prepare("SELECT \(fileColumns) FROM files WHERE message_uid = 0 AND created_at < ? ORDER BY created_at LIMIT ?")
        fileTotals = try db.prepare("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM files WHERE message_uid != 0 AND removed = 0")
        removedFiles = try db.prepare("SELECT \(fileColumns) FROM files WHERE removed != 0 ORDER BY id LIMIT ?")
        threadAfter = try db.prepare("SELECT \(cols) FROM messages WHERE thread_root = ? AND seq > ? ORDER BY seq ASC LIMIT ?")
        reactions = try db.prepare("SELECT type, COUNT(*), MAX(user_id = ?) FROM reactions WHERE message_uid = ? GROUP BY type ORDER BY type")
        reactorList = try db.prepare("SELECT user_id FROM reactions WHERE message_uid = ? AND type = ? ORDER BY time, user_id LIMIT ?")
        reactorCount = try db.prepare("SELECT COUNT(*) FROM reactions WHERE message_uid = ? AND type = ?")
        timeOfSeq = try db.prepare("SELECT sent_time FROM messages WHERE channel_id = ? AND seq = ?")
        lastSeq = try db.prepare("SELECT MAX(seq) FROM messages WHERE channel_id = ?")
        before = try db.prepare("SELECT \(cols) FROM messages WHERE channel_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?")
        after = try db.prepare("SELECT \(cols) FROM messages WHERE channel_id = ? AND seq > ? ORDER BY seq ASC LIMIT ?")
        byUID = try db.prepare("SELECT \(cols) FROM messages WHERE uid = ?")
        cursor = try db.prepare("SELECT ord FROM sync_cursors WHERE user_id = ? AND device_id = ?")
        inbox = try db.prepare("SELECT ord, message_uid, event FROM inbox WHERE user_id = ? AND ord > ? AND ord <= ? ORDER BY ord LIMIT ?")
        received = try db.prepare("SELECT flags FROM received_status WHERE user_id = ? AND message_uid = ?")
        directCount = try db.prepare("SELECT COUNT(*) FROM messages WHERE server_id = 0 AND channel_id = ? AND sender = ? AND sent_time <= ? AND removed = 0 AND withheld = 0")
        groupCount = try db.prepare("SELECT COUNT(*) FROM messages WHERE server_id = 0 AND channel_id = ? AND sender != ? AND sent_time <= ? AND removed = 0 AND withheld = 0")
    }

    func run(_ request: ReadRequest, into result: inout ReadResult) throws(StoreError) {
        switch request {
        case .inbox(let user, let device, let start, let upTo, let limit):
            var from = start ?? 0
            if start == nil {
                let s = cursor.reset()
                s.bind(1, user); s.bind(2, device)
                if try s.step() { from = s.uint(0) }
                s.reset()
            }
            result.cursor = from
            let s = inbox.reset()
            s.bind(1, user); s.bind(2, from); s.bind(3, upTo); s.bind(4, Int64(limit + 1))
            var rows: [(UInt64, UInt64, [UInt8])] = []
            while try s.step() { rows.append((s.uint(0), s.uint(1), s.blob(2))) }
            s.reset()
            result.hasMore = rows.count > limit
            if result.hasMore { rows.removeLast() }
            for (ord, uid, event) in rows {
                var message: MessageRecord?
                if uid != 0 { message = try lookup(uid) }
                result.inbox.append(InboxItem(ord: ord, message: message, event: event))
            }
        case .receivedStatus(let user, let uids):
            for uid in uids {
                let s = received.reset()
                s.bind(1, user); s.bind(2, uid)
                result.statuses.append(try s.step() ? ReceivedFlags(rawValue: UInt32(truncatingIfNeeded: s.uint(0))) : [])
                s.reset()
            }
        case .directSentCount(let conversation, let sender, let upTo), .groupSentCount(let conversation, let sender, let upTo):
            // For a group, `sender` is the reader, whose messages are left out.
            var group = false
            if case .groupSentCount = request { group = true }
            let s = (group ? groupCount : directCount).reset()
            s.bind(1, conversation); s.bind(2, sender); s.bind(3, upTo)
            if try s.step() { result.count = s.uint(0) }
            s.reset()
        case .history, .messages, .thread, .historyAtTime:
            (result.messages, result.hasMore) = try messages(request)
            let viewer: UserID = switch request {
            case .history(_, _, _, _, let v), .messages(_, let v), .thread(_, _, _, let v), .historyAtTime(_, _, _, _, let v): v
            default: ""
            }
            for i in result.messages.indices { result.messages[i].changes.reactions = try reactionCounts(result.messages[i].uid, viewer: viewer) }
        case .seqAtTime(let channel, let time):
            result.count = try seq(in: channel, atOrBefore: time)
        case .fileBytes(let user):
            let s = fileBytes.reset()
            s.bind(1, user)
            if try s.step() { result.count = s.uint(0) }
            s.reset()
        case .files(let ids):
            for id in ids {
                let s = fileByID.reset()
                s.bind(1, id)
                if try s.step() { result.files.append(Self.file(s)) }
                s.reset()
            }
        case .fileTotals:
            let s = fileTotals.reset()
            if try s.step() { (result.count, result.bytes) = (s.uint(0), s.uint(1)) }
            s.reset()
        case .sweepableFiles(let before, let limit):
            let unsent = unsentFiles.reset()
            unsent.bind(1, before); unsent.bind(2, Int64(limit))
            while try unsent.step() { result.files.append(Self.file(unsent)) }
            unsent.reset()
            let removed = removedFiles.reset()
            removed.bind(1, Int64(max(limit - result.files.count, 0)))
            while try removed.step() { result.files.append(Self.file(removed)) }
            removed.reset()
        case .auditLog(let query):
            (result.audit, result.hasMore) = try audit.run(query)
        case .reactors(let message, let type, let limit):
            let list = reactorList.reset()
            list.bind(1, message); list.bind(2, UInt64(type)); list.bind(3, Int64(limit))
            while try list.step() { result.users.append(list.text(0)) }
            list.reset()
            let count = reactorCount.reset()
            count.bind(1, message); count.bind(2, UInt64(type))
            if try count.step() { result.count = count.uint(0) }
            count.reset()
        case .search(let search):
            guard let reads = self.search else { throw StoreError(code: -1, message: "search is off (search-index)") }
            try reads.run(search, into: &result)
            for i in result.messages.indices { result.messages[i].changes.reactions = try reactionCounts(result.messages[i].uid, viewer: search.viewer) }
        }
    }

    private static func file(_ s: Statement) -> FileRecord {
        var f = FileRecord(id: s.uint(0), uploader: s.text(1), serverID: s.uint(2), channelID: s.uint(3), filename: s.text(4),
                           contentType: s.text(5), size: s.uint(6), sha256: s.text(7), createdAt: s.uint(8))
        f.messageUID = s.uint(9)
        f.removed = s.bool(10)
        return f
    }

    private func reactionCounts(_ uid: MessageUID, viewer: UserID) throws(StoreError) -> [ReactionCount] {
        let s = reactions.reset()
        s.bind(1, viewer); s.bind(2, uid)
        defer { s.reset() }
        var counts: [ReactionCount] = []
        while try s.step() { counts.append(ReactionCount(type: UInt32(clamping: s.uint(0)), count: UInt32(clamping: s.uint(1)), mine: s.bool(2))) }
        return counts
    }

    /// The last seq sent at or before `time`: a binary search over the
    /// channel's seqs (gapless, and sent times never go back within a
    /// channel), each step one point lookup, so no index on time is written per message.
    private func seq(in channel: ChannelID, atOrBefore time: UInt64) throws(StoreError) -> UInt64 {
        let top = lastSeq.reset()
        top.bind(1, channel)
        var hi: UInt64 = try top.step() ? top.uint(0) : 0
        top.reset()
        var lo: UInt64 = 0
        while lo < hi {
            let mid = lo + (hi - lo + 1) / 2
            let s = timeOfSeq.reset()
            s.bind(1, channel); s.bind(2, mid)
            let t = try s.step() ? s.uint(0) : UInt64.max
            s.reset()
            if t <= time { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    private func lookup(_ uid: MessageUID) throws(StoreError) -> MessageRecord? {
        let s = byUID.reset()
        s.bind(1, uid)
        defer { s.reset() }
        return try s.step() ? MessageRows.readAll(s) : nil
    }

    private func messages(_ request: ReadRequest) throws(StoreError) -> ([MessageRecord], Bool) {
        switch request {
        case .historyAtTime(let channel, let time, let isAfter, let limit, let viewer):
            // Older than `time`: before the first seq sent at or after it; newer: after the last sent at or before it.
            let anchor = isAfter ? try seq(in: channel, atOrBefore: time) : try seq(in: channel, atOrBefore: max(time, 1) - 1) + 1
            return try messages(.history(channel: channel, anchor: anchor, after: isAfter, limit: limit, viewer: viewer))
        case .history(let channel, let anchor, let isAfter, let limit, _):
            let s = (isAfter ? after : before).reset()
            s.bind(1, channel)
            s.bind(2, !isAfter && anchor == 0 ? UInt64(Int64.max) : anchor)
            s.bind(3, Int64(limit + 1))
            var rows: [MessageRecord] = []
            while try s.step() { rows.append(MessageRows.readAll(s)) }
            s.reset()
            let more = rows.count > limit
            if more { rows.removeLast() }
            if !isAfter { rows.reverse() }
            return (rows, more)
        case .thread(let root, let afterSeq, let limit, _):
            let s = threadAfter.reset()
            s.bind(1, root); s.bind(2, afterSeq); s.bind(3, Int64(limit + 1))
            var rows: [MessageRecord] = []
            while try s.step() { rows.append(MessageRows.readAll(s)) }
            s.reset()
            let more = rows.count > limit
            if more { rows.removeLast() }
            return (rows, more)
        case .messages(let uids, _):
            var rows: [MessageRecord] = []
            for uid in uids { if let m = try lookup(uid) { rows.append(m) } }
            return (rows, false)
        default:
            return ([], false)
        }
    }
}

/// Moves a freshly opened connection into its thread exactly once. The
/// opening thread never touches it after the hand-over, so no two threads
/// ever use it: that is why the unchecked conformance is safe.
final class ConnectionHandOver: @unchecked Sendable {
    private var connection: SQLiteConnection?
    init(_ connection: SQLiteConnection) { self.connection = connection }
    func take() -> SQLiteConnection {
        defer { connection = nil }
        return connection!
    }
}
