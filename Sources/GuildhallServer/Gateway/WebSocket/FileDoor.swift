// Uploads into the local store over the WebSocket listener's HTTP (docs/
// files.md "The local store"): `PUT /files/upload/<ticket>` with the bytes.
// The ticket (UploadTicket) carries the upload's terms signed, so this door
// needs no home: it checks the signature, the expiry, the length and the
// type before reading a byte of the body (413 for too much), then hands the
// body, piece by piece, to a worker queue that writes and hashes it
// (LocalFileStore; file I/O never runs on the loop). Reading pauses while
// more than a MiB waits for the disk. The worker's verdict comes back
// through the loop's inbox (`LoopMessage.files`) and is the answer: 201 with
// the stored file, or a 4xx or 503 and nothing stored. An upload not done
// within upload-deadline-seconds is cut. Loop thread only, but the workers.

import Dispatch
import Foundation
import GuildhallCore
import GuildhallFiles
import GuildhallLoop
import Synchronization

final class FileDoor {
    /// What a worker reports about upload `key`.
    enum Outcome: Sendable {
        case stored(StoredFile)
        case refused(UploadRefusal)
        /// Its queue of pieces drained below the low mark: reading may go on.
        case drained
    }

    static let path = "/files/upload/"
    /// Reading pauses above `high` bytes waiting for the disk and goes on below `low`.
    static let high = 1 << 20, low = 256 << 10

    private let store: LocalFileStore?
    private let settings: () -> Settings
    private let metrics: NodeMetrics
    /// Posts a worker's report to this loop's inbox (set by the loop before it listens).
    var post: @Sendable (UInt64, Outcome) -> Void = { _, _ in }
    private let answer: (TCPConnection, [UInt8]) -> Void
    private var uploads: [UInt64: Upload] = [:]
    private var nextKey: UInt64 = 0

    /// One upload under way.
    private final class Upload {
        let connection: TCPConnection
        let incoming: IncomingFile
        let started: UInt64
        let queue = DispatchQueue(label: "guildhall-upload")
        let waiting = Backlog()
        var failed = false
        init(_ c: TCPConnection, _ incoming: IncomingFile, started: UInt64) { connection = c; self.incoming = incoming; self.started = started }
    }

    /// Bytes handed to the worker and not yet written, and whether the loop waits for them to drain.
    private final class Backlog: Sendable {
        let bytes = Atomic<Int>(0)
        let paused = Atomic<Bool>(false)
    }

    /// `answer` writes a whole HTTP answer and closes the connection.
    init(store: LocalFileStore?, settings: @escaping () -> Settings, metrics: NodeMetrics, answer: @escaping (TCPConnection, [UInt8]) -> Void) {
        self.store = store
        self.settings = settings
        self.metrics = metrics
        self.answer = answer
    }

    static func isUpload(_ head: HTTPRequest) -> Bool { head.path.hasPrefix(path) }

    /// An upload's head: checked, then its body goes to a worker (the key),
    /// or it is answered now (nil; the body is not read).
    func begin(_ head: HTTPRequest, on c: TCPConnection, now: UInt64, wallClock: UInt64) -> UInt64? {
        do throws(UploadRefusal) {
            let incoming = try accept(head, wallClock: wallClock)
            nextKey += 1
            uploads[nextKey] = Upload(c, incoming, started: now)
            // A client that waits to be told to send its body (curl does, past 1 KiB) is told at once.
            if head.header("Expect")?.lowercased() == "100-continue" {
                c.enqueue(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
                c.flush()
            }
            return nextKey
        } catch {
            metrics.fileRefused(status: error.status)
            answer(c, Self.response(error.status, ["error": error.description]))
            return nil
        }
    }

    private func accept(_ head: HTTPRequest, wallClock: UInt64) throws(UploadRefusal) -> IncomingFile {
        guard let store else { throw UploadRefusal(404, "this node keeps no files") }
        guard head.method == "PUT" else { throw UploadRefusal(405, "upload with PUT") }
        let key = UploadTicket.key(secret: settings().secret)
        guard let ticket = UploadTicket.verify(head.path.dropFirst(Self.path.count), with: key) else {
            throw UploadRefusal(403, "this upload URL is not one this server made")
        }
        guard wallClock < ticket.expiresAt else { throw UploadRefusal(403, "this upload URL expired; ask for a new upload") }
        guard head.header("Transfer-Encoding") == nil, let length = head.header("Content-Length").flatMap(UInt64.init) else {
            throw UploadRefusal(411, "send the file with a Content-Length")
        }
        let max = UInt64(settings().maxFileBytes)
        guard length <= ticket.size, length <= max else {
            throw UploadRefusal(413, "\(length) bytes is more than this upload's \(min(ticket.size, max))")
        }
        guard length == ticket.size else { throw UploadRefusal(400, "this upload is \(ticket.size) bytes, not \(length)") }
        guard (head.header("Content-Type") ?? "").lowercased() == ticket.contentType else {
            throw UploadRefusal(400, "send Content-Type: \(ticket.contentType), as the upload was asked for")
        }
        return try store.begin(ticket.fileID, size: ticket.size, sha256: ticket.sha256, contentType: ticket.contentType)
    }

    /// A piece of upload `key`'s body, for its worker.
    func piece(_ key: UInt64, _ bytes: UnsafeRawBufferPointer) {
        guard let u = uploads[key], !u.failed else { return }
        let copy = [UInt8](bytes)
        let waiting = u.waiting.bytes.add(copy.count, ordering: .relaxed).newValue
        u.queue.async { [incoming = u.incoming, backlog = u.waiting, post] in
            let ok = incoming.append(copy)
            let left = backlog.bytes.subtract(copy.count, ordering: .relaxed).newValue
            if !ok { post(key, .refused(UploadRefusal(413, "more bytes than this upload's size"))) }
            if left < Self.low, backlog.paused.compareExchange(expected: true, desired: false, ordering: .relaxed).exchanged {
                post(key, .drained)
            }
        }
        if waiting > Self.high, !u.waiting.paused.load(ordering: .relaxed) {
            u.waiting.paused.store(true, ordering: .relaxed)
            u.connection.stopReading()
        }
    }

    /// Upload `key`'s body is whole: its worker checks and keeps it.
    func bodyEnded(_ key: UInt64) {
        guard let u = uploads[key], !u.failed else { return }
        u.queue.async { [incoming = u.incoming, post] in
            do throws(UploadRefusal) { post(key, .stored(try incoming.finish())) } catch { post(key, .refused(error)) }
        }
    }

    /// Upload `key`'s connection ended before its answer: what arrived is dropped.
    func abandoned(_ key: UInt64) {
        guard let u = uploads.removeValue(forKey: key) else { return }
        u.queue.async { [incoming = u.incoming] in incoming.abandon() }
    }

    /// A worker's report.
    func arrived(_ key: UInt64, _ outcome: Outcome) {
        guard let u = uploads[key] else { return }
        switch outcome {
        case .drained:
            if !u.failed { u.connection.startReading() }
        case .stored(let file):
            uploads[key] = nil
            metrics.fileUploaded(bytes: file.size)
            answer(u.connection, Self.response(201, ["file_id": String(file.fileID), "size": file.size, "sha256": file.sha256]))
        case .refused(let refusal):
            metrics.fileRefused(status: refusal.status)
            uploads[key] = nil
            u.failed = true
            u.queue.async { [incoming = u.incoming] in incoming.abandon() }
            answer(u.connection, Self.response(refusal.status, ["error": refusal.description]))
        }
    }

    /// The listener closes: every upload under way is dropped.
    func abandonAll() {
        for key in Array(uploads.keys) { abandoned(key) }
    }

    /// Whether `c` is uploading (its deadline is the upload's, not the handshake's).
    func isUploading(_ c: TCPConnection) -> Bool { uploads.values.contains { $0.connection === c } }

    /// Cuts uploads older than upload-deadline-seconds.
    func cutSlow(now: UInt64) {
        let deadline = UInt64(settings().uploadDeadlineSeconds) * 1000
        for (key, u) in uploads where now >= u.started + deadline {
            arrived(key, .refused(UploadRefusal(408, "the upload took longer than upload-deadline-seconds (\(deadline / 1000) s)")))
        }
    }

    /// An HTTP answer with a small JSON body; the connection closes after it.
    static func response(_ status: Int, _ body: [String: Any]) -> [UInt8] {
        response(status, json: (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])).map(Array.init) ?? Array("{}".utf8))
    }

    /// An HTTP answer with a JSON body as bytes; the connection closes after it.
    static func response(_ status: Int, json: [UInt8]) -> [UInt8] {
        let reason = [200: "OK", 201: "Created", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout",
                      409: "Conflict", 411: "Length Required", 413: "Content Too Large", 415: "Unsupported Media Type", 429: "Too Many Requests",
                      503: "Service Unavailable"][status] ?? "Error"
        let head = "HTTP/1.1 \(status) \(reason)\r\nContent-Type: application/json\r\nContent-Length: \(json.count)\r\n"
            + "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + json
    }
}
