// The load generator over WebSocket (`bench fanout --transport ws`,
// README "Web client"): each connection opens with the upgrade handshake, then carries the
// same frames as TCP as WebSocket messages, binary (`guildhall.proto`) or
// JSON text (`guildhall.json`). The generator keeps speaking length-prefixed
// protobuf: this link turns what it sends into masked client frames (held
// until the handshake is answered) and what it reads back into the stream
// TCP would have carried, so acknowledgements and records are counted the
// same way. For JSON it does only what a browser must to find them: a
// response's kind from its first bytes, and a record's bytes from the
// base64 of its `data` field.

import Foundation
import Glibc
import GuildhallWire

enum BenchTransport: String, CaseIterable {
    case tcp
    case ws
    case wsJSON = "ws-json"
    /// TCP with TLS to the client listener (a certificate of a CA made for the run).
    case tls

    /// Whether the load goes to the WebSocket listener.
    var isWebSocket: Bool { self == .ws || self == .wsJSON }

    var subprotocol: String? {
        switch self {
        case .tcp, .tls: nil
        case .ws: "guildhall.proto"
        case .wsJSON: "guildhall.json"
        }
    }
}

final class WebSocketBenchLink {
    let json: Bool
    private var answered = false
    private var head: [UInt8] = []
    private var held: [UInt8] = []
    private var buffer: [UInt8] = []
    /// A zero mask: legal (RFC 6455 asks clients for a random one, which the server cannot check) and free to apply.
    private static let mask: [UInt8] = [0, 0, 0, 0]

    init(json: Bool) { self.json = json }

    /// The opening handshake.
    var handshake: [UInt8] {
        Array(("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Protocol: \(json ? "guildhall.json" : "guildhall.proto")\r\n\r\n").utf8)
    }

    /// Client frames for length-prefixed protobuf frames; empty while the handshake is unanswered (they wait).
    func outbound(_ frames: [UInt8]) -> [UInt8] {
        guard answered else {
            held += frames
            return []
        }
        var out: [UInt8] = []
        var at = 0
        while at + 4 <= frames.count {
            let n = Int(frames[at]) << 24 | Int(frames[at + 1]) << 16 | Int(frames[at + 2]) << 8 | Int(frames[at + 3])
            let payload = Array(frames[(at + 4)..<(at + 4 + n)])
            at += 4 + n
            if json {
                out += WebSocketFrames.clientFrame(0x1, JSONFrames.text(payload: payload), mask: Self.mask)
            } else {
                out += WebSocketFrames.clientFrame(0x2, payload, mask: Self.mask)
            }
        }
        return out
    }

    /// What TCP would have carried for `bytes` read, and what to send now
    /// (the held frames, once the handshake is answered). A refused handshake throws.
    func inbound(_ bytes: UnsafeRawBufferPointer) throws -> (stream: [UInt8], send: [UInt8]) {
        var send: [UInt8] = []
        var rest = bytes[...]
        if !answered {
            head += bytes
            guard let end = head.firstRange(of: Array("\r\n\r\n".utf8)) else { return ([], []) }
            guard head.starts(with: Array("HTTP/1.1 101 ".utf8)) else {
                throw BenchError("WebSocket handshake refused: \(String(decoding: head[..<end.lowerBound], as: UTF8.self))")
            }
            answered = true
            let after = head.count - end.upperBound
            rest = bytes[(bytes.count - after)...]
            head = []
            send = outbound(held)
            held = []
        }
        buffer += rest
        var stream: [UInt8] = []
        let table = Self.sextet, dataWord = Self.dataWord  // globals read once per call, not per byte (each read costs a swift_once)
        // One access to the buffer for the whole walk (per-byte access to a class's array costs exclusivity checks).
        let consumed = buffer.withUnsafeBytes { b -> Int in
            var at = 0
            while b.count - at >= 2 {
                var length = Int(b[at + 1] & 0x7F), header = 2
                if length == 126 {
                    guard b.count - at >= 4 else { break }
                    length = Int(b[at + 2]) << 8 | Int(b[at + 3])
                    header = 4
                } else if length == 127 {
                    guard b.count - at >= 10 else { break }
                    length = Int(UInt64(bigEndian: b.loadUnaligned(fromByteOffset: at + 2, as: UInt64.self)))
                    header = 10
                }
                guard b.count - at >= header + length else { break }
                let opcode = b[at] & 0x0F
                let payload = UnsafeRawBufferPointer(rebasing: b[(at + header)..<(at + header + length)])
                at += header + length
                if opcode == 0x2 {
                    FrameEncoding.appendLength(UInt32(length), to: &stream)
                    stream.append(contentsOf: payload)
                } else if opcode == 0x1 {
                    Self.translate(payload, into: &stream, sextet: table, dataWord: dataWord)
                }
            }
            return at
        }
        buffer.removeFirst(consumed)
        return (stream, send)
    }

    /// Frame{response{id: 1, ok{}}}: what a successful answer counts as.
    private static let success: [UInt8] = [0, 0, 0, 6, 0x12, 4, 0x08, 1, 0x1A, 0]
    private static let errorKey = Array(#""error":"#.utf8), dataKey = Array(#""data":""#.utf8)

    /// A JSON text as the TCP stream would hold it: a success for a response
    /// without an error, the record's header (in an event frame) for a message.
    private static func translate(_ raw: UnsafeRawBufferPointer, into stream: inout [UInt8], sextet: [UInt8], dataWord: UInt64) {
        // {"response":… or {"event":…: the third byte tells them apart.
        guard raw.count > 12 else { return }
        let kind = raw[2]
        if kind == UInt8(ascii: "r") {
            if raw.prefix(48).firstRange(of: errorKey) == nil { stream += success }
            return
        }
        guard kind == UInt8(ascii: "e"), let from = findData(dataWord, in: raw) else { return }
        // The header's bytes are what the generator reads; 40 base64 characters hold its 28.
        let chars = (BenchRecord.headerSize + 2) / 3 * 4
        guard raw.count - from >= chars else { return }
        FrameEncoding.appendLength(UInt32(chars / 4 * 3 + 1), to: &stream)
        stream.append(0x1A)
        var i = from
        while i < from + chars {
            var group: UInt32 = 0
            for k in 0..<4 { group = group << 6 | UInt32(sextet[Int(raw[i + k])]) }
            stream.append(UInt8(truncatingIfNeeded: group >> 16))
            stream.append(UInt8(truncatingIfNeeded: group >> 8))
            stream.append(UInt8(truncatingIfNeeded: group))
            i += 4
        }
    }

    /// The offset after `"data":"` in `raw`, read backwards from the end, where
    /// a message's body sits: one 8-byte compare per position.
    private static func findData(_ dataWord: UInt64, in raw: UnsafeRawBufferPointer) -> Int? {
        var i = raw.count - 8
        while i >= 0 {
            if raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) == dataWord { return i + 8 }
            i -= 1
        }
        return nil
    }

    private static let dataWord = dataKey.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }

    /// Base64's alphabet, each character's six bits.
    private static let sextet: [UInt8] = {
        var t = [UInt8](repeating: 0, count: 256)
        for (i, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() { t[Int(c)] = UInt8(i) }
        return t
    }()
}
