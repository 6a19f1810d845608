// The web client's files over plain HTTP on the WebSocket listener (README "Web client",
// setting `web-client`): GET / (or an invite link, /invite/CODE) is the page, which then opens a WebSocket
// back to /ws on the same host, so the default `ws-allowed-origins` (the
// listener's own host) admits it. The files are web/, embedded in the binary
// by `make web` (WebClientFiles.swift), so a container needs nothing beside
// the binary. Each answer closes its connection. Pure.

import GuildhallLoop

enum WebClientPages {
    /// The answer to `r` when it asks for one of the web client's files.
    static func response(to r: HTTPRequest) -> [UInt8]? {
        guard r.method == "GET" || r.method == "HEAD" else { return nil }
        // An invite link (`/invite/CODE`) is the page, which shows the join screen.
        let page = r.path == "/" || r.path.hasPrefix("/invite/")
        guard let file = WebClientFiles.files[page ? "/index.html" : r.path] else { return nil }
        let body = Array(file.text.utf8)
        // The token may sit in the page's query: no referrer carries it away,
        // and the page loads nothing from elsewhere.
        let head = "HTTP/1.1 200 OK\r\nContent-Type: \(file.type)\r\nContent-Length: \(body.count)\r\n"
            + "Cache-Control: no-cache\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n"
            + "Content-Security-Policy: default-src 'self'; connect-src 'self'; img-src 'self' data:\r\n"
            + "Connection: close\r\n\r\n"
        return Array(head.utf8) + (r.method == "HEAD" ? [] : body)
    }
}
