// The reader thread: history and lookups on its own connection, beside the
// writer (WAL lets readers run while the writer commits). Each request reads
// in its own implicit transaction, so it sees every commit that happened
// before it was submitted.

import Foundation
import GuildhallCore

public enum ReadRequest: Sendable, Equatable {
    /// Messages of a channel beside `anchor` (exclusive): older when `after`
    /// is false (anchor 0 = from the newest), newer when true (anchor 0 = from the oldest).
    case history(channel: ChannelID, anchor: UInt64, after: Bool, limit: Int)
    /// Messages by UID, in the order asked; unknown UIDs are left out.
    case messages(uids: [MessageUID])
}

public struct ReadResult: Sendable {
    public let ticket: UInt64
    /// Ascending seq for history; the order asked for lookups.
    public let messages: [MessageRecord]
    public let hasMore: Bool
    public let error: StoreError?
}

public final class StoreReader: Sendable {
    private let queue = JobQueue<(UInt64, ReadRequest)>()
    private let done = DispatchSemaphore(value: 0)

    init(path: String, onResult: @escaping @Sendable ([ReadResult]) -> Void) throws(StoreError) {
        let connection = ConnectionHandOver(try SQLiteConnection(path: path, readOnly: true))
        let thread = Thread { [queue, done] in
            StoreReader.run(connection.take(), queue: queue, onResult: onResult)
            done.signal()
        }
        thread.name = "guildhall-reader"
        thread.start()
    }

    public func submit(ticket: UInt64, _ request: ReadRequest) { queue.push((ticket, request)) }

    public func stop() {
        queue.stop()
        done.wait()
    }

    private static func run(_ db: SQLiteConnection, queue: JobQueue<(UInt64, ReadRequest)>,
                            onResult: @Sendable ([ReadResult]) -> Void) {
        let queries: ReaderQueries
        do { queries = try ReaderQueries(db) } catch { fatalError("cannot prepare reader statements: \(error)") }
        while true {
            let (jobs, stopping) = queue.takeAll()
            onResult(jobs.map { ticket, request -> ReadResult in
                do throws(StoreError) {
                    let (messages, more) = try queries.run(request)
                    return ReadResult(ticket: ticket, messages: messages, hasMore: more, error: nil)
                } catch {
                    return ReadResult(ticket: ticket, messages: [], hasMore: false, error: error)
                }
            })
            if stopping && queue.isEmpty { return }
        }
    }
}

final class ReaderQueries {
    private let before, after, byUID: Statement

    init(_ db: SQLiteConnection) throws(StoreError) {
        let cols = MessageRows.columns
        before = try db.prepare("SELECT \(cols) FROM messages WHERE channel_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?")
        after = try db.prepare("SELECT \(cols) FROM messages WHERE channel_id = ? AND seq > ? ORDER BY seq ASC LIMIT ?")
        byUID = try db.prepare("SELECT \(cols) FROM messages WHERE uid = ?")
    }

    func run(_ request: ReadRequest) throws(StoreError) -> ([MessageRecord], Bool) {
        switch request {
        case .history(let channel, let anchor, let isAfter, let limit):
            let s = (isAfter ? after : before).reset()
            s.bind(1, channel)
            s.bind(2, !isAfter && anchor == 0 ? UInt64(Int64.max) : anchor)
            s.bind(3, Int64(limit + 1))
            var rows: [MessageRecord] = []
            while try s.step() { rows.append(MessageRows.read(s)) }
            s.reset()
            let more = rows.count > limit
            if more { rows.removeLast() }
            if !isAfter { rows.reverse() }
            return (rows, more)
        case .messages(let uids):
            var rows: [MessageRecord] = []
            for uid in uids {
                let s = byUID.reset()
                s.bind(1, uid)
                if try s.step() { rows.append(MessageRows.read(s)) }
                s.reset()
            }
            return (rows, false)
        }
    }
}
