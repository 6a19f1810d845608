// The web client's files over plain HTTP on the WebSocket listener (README "Web client",
// setting `web-client`): GET / (or an invite link, /invite/CODE) is the page, which then opens a WebSocket
// back to /ws on the same host, so the default `ws-allowed-origins` (the
// listener's own host) admits it. The files are web/, embedded in the binary
// by `make web` (Generated/WebClientFiles.swift, with an ETag and the gzip of
// each made then), so a container needs nothing beside the binary. Each
// answer is made once per file and encoding, at first use: gzip when the
// browser accepts it, and 304 when it already holds that version (its
// If-None-Match names the ETag); `no-cache` makes it ask each time, so a
// new server's files are never stale. Each answer closes its connection. Pure.

import Foundation
import GuildhallLoop

/// One embedded file, as `make web` wrote it.
struct WebClientFile {
    let type: String
    /// A hash of its text: the same text, the same ETag.
    let etag: String
    let gzipBase64: String
    let text: String
}

enum WebClientPages {
    /// A file's bodies and shared headers, made once.
    private struct Prepared {
        let plain: [UInt8]
        let gzipped: [UInt8]
        let headers: String
        let etag: String
    }

    private static let prepared: [String: Prepared] = WebClientFiles.files.mapValues { f in
        let etag = "\"\(f.etag)\""
        // The token may sit in the page's query: no referrer carries it away,
        // and the page loads nothing from elsewhere.
        let headers = "Content-Type: \(f.type)\r\nETag: \(etag)\r\nCache-Control: no-cache\r\nVary: Accept-Encoding\r\n"
            + "X-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n"
            + "Content-Security-Policy: default-src 'self'; connect-src 'self'; img-src 'self' data:\r\nConnection: close\r\n"
        return Prepared(plain: Array(f.text.utf8), gzipped: Data(base64Encoded: f.gzipBase64).map(Array.init) ?? [], headers: headers, etag: etag)
    }

    /// The answer to `r` when it asks for one of the web client's files.
    static func response(to r: HTTPRequest) -> [UInt8]? {
        guard r.method == "GET" || r.method == "HEAD" else { return nil }
        // An invite link (`/invite/CODE`) is the page, which shows the join screen.
        let page = r.path == "/" || r.path.hasPrefix("/invite/")
        guard let file = prepared[page ? "/index.html" : r.path] else { return nil }
        if let held = r.header("If-None-Match"), held.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == file.etag }) {
            return Array("HTTP/1.1 304 Not Modified\r\n\(file.headers)\r\n".utf8)
        }
        let gzip = accepts(gzipIn: r.header("Accept-Encoding")) && !file.gzipped.isEmpty
        let body = gzip ? file.gzipped : file.plain
        let head = "HTTP/1.1 200 OK\r\n\(file.headers)\(gzip ? "Content-Encoding: gzip\r\n" : "")Content-Length: \(body.count)\r\n\r\n"
        return Array(head.utf8) + (r.method == "HEAD" ? [] : body)
    }

    /// Whether an Accept-Encoding header takes gzip (named, and not with q=0).
    static func accepts(gzipIn header: String?) -> Bool {
        guard let header else { return false }
        return header.lowercased().split(separator: ",").contains { part in
            let fields = part.split(separator: ";").map { $0.replacingOccurrences(of: " ", with: "") }
            guard fields.first == "gzip" || fields.first == "*" else { return false }
            let q = fields.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return q > 0
        }
    }
}
