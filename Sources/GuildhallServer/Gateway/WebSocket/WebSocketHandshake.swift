// The WebSocket opening handshake (RFC 6455 §4.2, README "Web client"): what the
// server answers to the HTTP request that asks to upgrade at `/ws`. It
// checks the request is an upgrade a server must accept (GET, `Upgrade:
// websocket`, `Connection: upgrade`, a 16-byte key, version 13), that the
// page's origin may connect (`ws-allowed-origins`; a request without an
// Origin header is not from a browser and is let through), and picks the
// first subprotocol the client offers of the two Guildhall speaks:
// `guildhall.proto` (binary messages, each one protobuf `Frame`) and
// `guildhall.json` (text messages, each one `Frame` in proto3's JSON
// mapping). Pure: a request in, the bytes to answer out.

import Crypto
import Foundation
import GuildhallLoop

/// How a WebSocket session's frames are written: the subprotocol it chose.
enum WebSocketEncoding: String, Sendable, CaseIterable {
    case proto = "guildhall.proto"
    case json = "guildhall.json"
}

/// Which pages may open a WebSocket (`ws-allowed-origins`): a list of
/// origins (`https://chat.example.com`), `*` for any, or empty for pages
/// served by this listener itself (the Origin's host is the request's Host).
struct AllowedOrigins: Sendable, Equatable {
    let origins: Set<String>
    let any: Bool

    init(_ setting: String) {
        let list = setting.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        any = list.contains("*")
        origins = Set(list.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 })
    }

    func allows(origin: String?, host: String?) -> Bool {
        guard let origin = origin?.lowercased() else { return true }
        if any || origins.contains(origin) { return true }
        guard origins.isEmpty, let host = host?.lowercased() else { return false }
        return origin == "http://\(host)" || origin == "https://\(host)"
    }
}

enum WebSocketHandshake {
    enum Outcome: Equatable {
        /// Switch protocols: send `response`, then speak WebSocket with `encoding`.
        case upgrade(WebSocketEncoding, response: [UInt8])
        /// Refused: send `response` (its status says why) and close.
        case refuse(status: Int, response: [UInt8])
    }

    static let path = "/ws"
    /// RFC 6455 §1.3: appended to the client's key before hashing.
    static let keyGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    static func answer(_ r: HTTPRequest, origins: AllowedOrigins) -> Outcome {
        guard r.path == path else { return refuse(404, "no WebSocket endpoint here: connect to \(path)") }
        guard r.method == "GET" else { return refuse(405, "a WebSocket handshake is a GET") }
        guard tokens(r.header("Upgrade")).contains("websocket"), tokens(r.header("Connection")).contains("upgrade") else {
            return refuse(400, "not a WebSocket upgrade: Upgrade: websocket and Connection: Upgrade are needed")
        }
        guard r.header("Sec-WebSocket-Version")?.trimmingCharacters(in: .whitespaces) == "13" else {
            return refuse(426, "only WebSocket version 13 is spoken", extra: "Sec-WebSocket-Version: 13\r\n")
        }
        guard let key = r.header("Sec-WebSocket-Key")?.trimmingCharacters(in: .whitespaces),
              let decoded = Data(base64Encoded: key), decoded.count == 16 else {
            return refuse(400, "Sec-WebSocket-Key must be 16 bytes in base64")
        }
        guard origins.allows(origin: r.header("Origin"), host: r.header("Host")) else {
            return refuse(403, "this origin may not connect (ws-allowed-origins)")
        }
        let offered = (r.headers.filter { $0.name.lowercased() == "sec-websocket-protocol" }.flatMap { $0.value.split(separator: ",") })
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard let encoding = offered.lazy.compactMap(WebSocketEncoding.init(rawValue:)).first else {
            return refuse(400, "no subprotocol Guildhall speaks: offer guildhall.proto or guildhall.json")
        }
        let response = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(accept(key))\r\nSec-WebSocket-Protocol: \(encoding.rawValue)\r\n\r\n"
        return .upgrade(encoding, response: Array(response.utf8))
    }

    /// The Sec-WebSocket-Accept for a key: base64 of the SHA-1 of key + GUID.
    static func accept(_ key: String) -> String {
        Data(Insecure.SHA1.hash(data: Data((key + keyGUID).utf8))).base64EncodedString()
    }

    /// A header's comma-separated tokens, lowercased.
    private static func tokens(_ value: String?) -> [String] {
        (value ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
    }

    /// A refusal's bytes: the status, and why in plain text.
    static func refusal(_ status: Int, _ message: String) -> [UInt8] {
        guard case .refuse(_, let response) = refuse(status, message) else { return [] }
        return response
    }

    private static func refuse(_ status: Int, _ message: String, extra: String = "") -> Outcome {
        let reason = [400: "Bad Request", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout", 413: "Content Too Large",
                      426: "Upgrade Required", 431: "Request Header Fields Too Large"][status] ?? "Error"
        let body = message + "\n"
        let head = "HTTP/1.1 \(status) \(reason)\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n"
            + extra + "Connection: close\r\n\r\n"
        return .refuse(status: status, response: Array((head + body).utf8))
    }
}
