// Downloads from the local store over the WebSocket listener's HTTP (docs/
// files.md "Downloading"): `GET /files/<id>/<name>?u=&e=&s=`, a link made
// for one reader (DownloadLink). The link is checked here, on the loop; the
// file's record and bytes are read on a worker queue of the download's own
// (file I/O never runs on the loop), a piece at a time: the next piece is
// read only once the connection has written the last one down to a quarter
// MiB, so a slow reader holds a quarter MiB, not the file. A recalled or
// deleted message's file has no record any more: 404, whatever link is
// used. Files are served as downloads (Content-Disposition: attachment), in
// a sandbox with no sniffing, but for images, audio and video a browser can
// show safely; one byte range (`Range: bytes=a-b`) is honoured, so media
// can seek. A download whose socket takes nothing for write-stall-ms is cut.
// With the S3 store the link is checked the same way and answered with a
// redirect to the object, presigned for a few minutes (no I/O here): the
// bytes go between the client and the store, and a removed file's object
// is gone. Loop thread only, but the workers.

import Dispatch
import Foundation
import GuildhallCore
import GuildhallFiles
import GuildhallLoop

final class FileDownloads {
    /// What a download's worker reports.
    enum Report: Sendable {
        /// The answer's head; whether a body follows.
        case head([UInt8], body: Bool)
        case refused(UploadRefusal)
        /// The next piece of the body; whether it is the last.
        case piece([UInt8], last: Bool)
    }

    /// Bytes read per piece, and the queue below which the next is read.
    static let pieceBytes = 256 << 10, low = 256 << 10

    private let storage: FileStorage?
    private let settings: () -> Settings
    private let metrics: NodeMetrics
    /// Posts a worker's report to this loop's inbox (set by the loop before it listens).
    var post: @Sendable (UInt64, Report) -> Void = { _, _ in }
    /// Ends a connection, after `bytes` (which may be none).
    private let finish: (TCPConnection, [UInt8]) -> Void
    private var downloads: [UInt64: Download] = [:]
    private var nextKey: UInt64 = 0

    private final class Download {
        let connection: TCPConnection
        let source = Source()
        let queue = DispatchQueue(label: "guildhall-download")
        /// A piece is being read.
        var reading = false
        init(_ c: TCPConnection) { connection = c }
    }

    /// The open file and what is left to send: used by the download's queue only, in order.
    private final class Source: @unchecked Sendable {
        var fd: Int32 = -1
        var offset: UInt64 = 0, end: UInt64 = 0
        func close() {
            if fd >= 0 { Glibc.close(fd); fd = -1 }
        }
        deinit { close() }
    }

    /// How long a redirect to the S3 store works.
    static let redirectSeconds = 300

    init(storage: FileStorage?, settings: @escaping () -> Settings, metrics: NodeMetrics, finish: @escaping (TCPConnection, [UInt8]) -> Void) {
        self.storage = storage
        self.settings = settings
        self.metrics = metrics
        self.finish = finish
    }

    static func isDownload(_ r: HTTPRequest) -> Bool { r.path.hasPrefix(DownloadLink.pathPrefix) && !FileDoor.isUpload(r) }

    /// A download's request: checked, then its file read on a worker.
    func begin(_ r: HTTPRequest, on c: TCPConnection, wallClock: UInt64) {
        guard let storage else { return refuse(c, 404, ["error": "this node keeps no files"]) }
        guard r.method == "GET" || r.method == "HEAD" else { return refuse(c, 405, ["error": "download with GET"]) }
        guard let link = DownloadLink.verify(target: r.target, key: DownloadLink.key(secret: settings().secret)) else {
            return refuse(c, 403, ["error": "this download link is not one this server made"])
        }
        guard wallClock < link.expiresAt else {
            return refuse(c, 403, ["error": "this download link expired; get the message again for a new one"])
        }
        guard case .local(let store) = storage else {
            if case .s3(let s3) = storage { redirect(c, to: s3, link, path: r.path) }
            return
        }
        nextKey += 1
        let key = nextKey, d = Download(c)
        downloads[key] = d
        c.onWritten = { [unowned self] queued in if queued < Self.low { self.readMore(key) } }
        let range = r.header("Range"), withBody = r.method == "GET", cacheSeconds = (link.expiresAt - wallClock) / 1000
        d.queue.async { [source = d.source, post] in
            post(key, Self.open(link.fileID, store: store, range: range, into: source, withBody: withBody, cacheSeconds: cacheSeconds))
        }
    }

    /// Opens a file's bytes and makes its answer's head (on the worker).
    private static func open(_ id: UInt64, store: LocalFileStore, range: String?, into source: Source, withBody: Bool, cacheSeconds: UInt64) -> Report {
        guard let file = store.stored(id) else { return .refused(UploadRefusal(404, "file \(id) not found")) }
        let fd = Glibc.open(store.blobPath(file.sha256), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .refused(UploadRefusal(404, "file \(id) not found")) }
        source.fd = fd
        var status = 200, extra = ""
        (source.offset, source.end) = (0, file.size)
        switch ByteRange.parse(range, size: file.size) {
        case .whole: break
        case .part(let from, let to):
            (source.offset, source.end) = (from, to + 1)
            status = 206
            extra = "Content-Range: bytes \(from)-\(to)/\(file.size)\r\n"
        case .unsatisfiable:
            source.close()
            let head = "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */\(file.size)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            return .head(Array(head.utf8), body: false)
        }
        let shown = inline(file.contentType) ? "inline" : "attachment"
        let head = "HTTP/1.1 \(status) \(status == 206 ? "Partial Content" : "OK")\r\n"
            + "Content-Type: \(file.contentType)\r\nContent-Length: \(source.end - source.offset)\r\n\(extra)"
            + "Content-Disposition: \(shown)\r\nAccept-Ranges: bytes\r\nCache-Control: private, max-age=\(cacheSeconds)\r\n"
            + "X-Content-Type-Options: nosniff\r\nContent-Security-Policy: default-src 'none'; sandbox\r\nConnection: close\r\n\r\n"
        let body = withBody && source.end > source.offset
        if !body { source.close() }
        return .head(Array(head.utf8), body: body)
    }

    /// Answers a refusal and counts it.
    private func refuse(_ c: TCPConnection, _ status: Int, _ body: [String: Any]) {
        metrics.fileRefused(status: status)
        finish(c, FileDoor.response(status, body))
    }

    /// Types a browser shows without running anything (SVG can hold scripts: downloaded).
    private static func inline(_ type: String) -> Bool {
        ["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif"].contains(type) || type.hasPrefix("audio/") || type.hasPrefix("video/")
    }

    /// The same for a file known by its name alone (the S3 store's redirects).
    private static func inline(name: String) -> Bool {
        let ext = name.split(separator: ".").last.map { $0.lowercased() } ?? ""
        return ["png", "jpg", "jpeg", "gif", "webp", "avif", "mp3", "m4a", "ogg", "oga", "opus", "wav", "flac", "mp4", "m4v", "webm", "mov"].contains(ext)
    }

    /// Sends the client to the S3 store's object, presigned for a few minutes.
    private func redirect(_ c: TCPConnection, to s3: S3FileStore, _ link: DownloadLink, path: String) {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst(3).joined(separator: "/").removingPercentEncoding ?? ""
        let url = s3.downloadURL(link.fileID, filename: name, inline: Self.inline(name: name), seconds: Self.redirectSeconds)
        metrics.fileServed()
        finish(c, Array(("HTTP/1.1 302 Found\r\nLocation: \(url)\r\nContent-Length: 0\r\nCache-Control: private, max-age=\(Self.redirectSeconds / 2)\r\n"
                         + "Connection: close\r\n\r\n").utf8))
    }

    /// Reads download `key`'s next piece, unless one is being read.
    private func readMore(_ key: UInt64) {
        guard let d = downloads[key], !d.reading else { return }
        d.reading = true
        d.queue.async { [source = d.source, post] in
            guard source.fd >= 0, source.offset < source.end else { return }
            let count = Int(min(UInt64(Self.pieceBytes), source.end - source.offset))
            var bytes = [UInt8](repeating: 0, count: count)
            let n = bytes.withUnsafeMutableBytes { pread(source.fd, $0.baseAddress!, count, off_t(source.offset)) }
            guard n > 0 else {
                source.close()
                // The head is out: all that is left is to end the connection short of its length.
                return post(key, .piece([], last: true))
            }
            source.offset += UInt64(n)
            let last = source.offset >= source.end
            if last { source.close() }
            post(key, .piece(n == count ? bytes : Array(bytes.prefix(n)), last: last))
        }
    }

    /// A worker's report.
    func arrived(_ key: UInt64, _ report: Report) {
        guard let d = downloads[key] else { return }
        let c = d.connection
        switch report {
        case .refused(let refusal):
            end(key)
            refuse(c, refusal.status, ["error": refusal.description])
        case .head(let head, let body):
            guard body else {
                end(key)
                return finish(c, head)
            }
            c.enqueue(head)
            c.flush()
            metrics.fileServed()
            readMore(key)
        case .piece(let bytes, let last):
            d.reading = false
            if !bytes.isEmpty {
                c.enqueue(bytes)
                c.flush()
                metrics.fileBytesServed(bytes.count)
            }
            if last {
                end(key)
                finish(c, [])
            } else if c.queuedBytes < Self.low {
                readMore(key)
            }
        }
    }

    private func end(_ key: UInt64) {
        guard let d = downloads.removeValue(forKey: key) else { return }
        d.connection.onWritten = nil
        d.queue.async { [source = d.source] in source.close() }
    }

    /// Whether `c` is downloading (its deadline is the stall check's, not the handshake's).
    func isDownloading(_ c: TCPConnection) -> Bool { downloads.values.contains { $0.connection === c } }

    /// Downloads whose socket took nothing for write-stall-ms are cut; `c`'s, when it ended.
    func cutStalled() {
        let stall = UInt64(settings().writeStallMs)
        for (key, d) in downloads where d.connection.stuckMillis() >= stall {
            end(key)
            d.connection.abort()
        }
    }

    /// The connection ended (or the listener closes): its download stops.
    func abandoned(_ c: TCPConnection) {
        for (key, d) in downloads where d.connection === c { end(key) }
    }

    func abandonAll() {
        for key in Array(downloads.keys) { end(key) }
    }
}

/// One `Range: bytes=…` header against a file's size (RFC 9110 §14.1.2; one range only, else the whole file).
enum ByteRange: Equatable {
    case whole
    /// First and last byte, inclusive.
    case part(UInt64, UInt64)
    case unsatisfiable

    static func parse(_ header: String?, size: UInt64) -> ByteRange {
        guard let header, header.hasPrefix("bytes="), !header.contains(",") else { return .whole }
        let spec = header.dropFirst("bytes=".count).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard spec.count == 2 else { return .whole }
        let first = spec[0].trimmingCharacters(in: .whitespaces), last = spec[1].trimmingCharacters(in: .whitespaces)
        if first.isEmpty {
            // The last n bytes.
            guard let n = UInt64(last) else { return .whole }
            guard n > 0, size > 0 else { return .unsatisfiable }
            return .part(size - min(n, size), size - 1)
        }
        guard let from = UInt64(first) else { return .whole }
        guard from < size else { return .unsatisfiable }
        if last.isEmpty { return .part(from, size - 1) }
        guard let to = UInt64(last), to >= from else { return .whole }
        return .part(from, min(to, size - 1))
    }
}
