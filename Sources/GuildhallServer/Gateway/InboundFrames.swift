// A session's inbound framing (docs/architecture.md, README "Web client"): the length-prefixed
// frames of guildhall's TCP protocol, or WebSocket messages (read by wslay,
// WebSocketReader), each one `Frame`: binary protobuf for `guildhall.proto`,
// text in proto3's JSON mapping for `guildhall.json`, turned into protobuf
// bytes here so the rest of the gateway reads one kind of payload. What
// wslay writes back (pongs, closes) comes out of `feed`. Loop thread only;
// it moves with its connection when a resume hands the socket to another loop.

import GuildhallLoop
import GuildhallWire
import SwiftProtobuf

struct InboundFrames: @unchecked Sendable {  // the WebSocket reader moves with its connection, never shared
    private var decoder: FrameDecoder
    private let webSocket: WebSocketInbound?

    /// Length-prefixed frames (TCP).
    init(maxFrameBytes: Int) {
        decoder = FrameDecoder(maxFrameBytes: maxFrameBytes)
        webSocket = nil
    }

    /// WebSocket messages in `encoding`.
    init(webSocket encoding: WebSocketEncoding, maxFrameBytes: Int) {
        decoder = FrameDecoder(maxFrameBytes: maxFrameBytes)
        webSocket = WebSocketInbound(encoding: encoding, maxFrameBytes: maxFrameBytes)
    }

    /// The WebSocket subprotocol, nil for TCP.
    var webSocketEncoding: WebSocketEncoding? { webSocket?.encoding }

    var maxFrameBytes: Int {
        get { decoder.maxFrameBytes }
        set {
            decoder.maxFrameBytes = newValue
            webSocket?.reader.maxMessageBytes = newValue
        }
    }

    /// Bytes held for a frame not yet complete (a WebSocket's are wslay's, not counted).
    var bufferedBytes: Int { webSocket == nil ? decoder.bufferedBytes : 0 }

    /// Takes bytes read from the socket; for a WebSocket, what wslay wants written back and whether the stream ended.
    mutating func feed(_ bytes: UnsafeRawBufferPointer) -> WebSocketReader.Output? {
        guard let webSocket else {
            decoder.feed(bytes)
            return nil
        }
        var out = webSocket.reader.feed(bytes)
        for m in out.messages { webSocket.pending.append(webSocket.payload(m.payload, text: m.text)) }
        out.messages = []
        return out
    }

    /// Gives back the TCP decoder's storage while it holds nothing (a quiet session).
    mutating func giveBackRoom() { decoder.giveBackRoom() }

    /// The next whole frame's payload, nil when more bytes are needed.
    mutating func next() throws(FrameDecodeError) -> [UInt8]? {
        guard let webSocket else { return try decoder.next() }
        guard webSocket.next < webSocket.pending.count else {
            webSocket.pending.removeAll(keepingCapacity: true)
            webSocket.next = 0
            return nil
        }
        defer { webSocket.next += 1 }
        return webSocket.pending[webSocket.next]
    }
}

/// A WebSocket connection's reader and the messages it read, not yet handled.
final class WebSocketInbound {
    let encoding: WebSocketEncoding
    let reader: WebSocketReader
    var pending: [[UInt8]] = []
    var next = 0

    init(encoding: WebSocketEncoding, maxFrameBytes: Int) {
        self.encoding = encoding
        reader = WebSocketReader(maxMessageBytes: maxFrameBytes)
    }

    /// A message as a protobuf `Frame` payload: binary as it is; text (JSON)
    /// parsed and serialized (a text that is not a JSON `Frame` becomes an
    /// empty payload, which the gateway refuses as a frame that holds no request).
    func payload(_ message: [UInt8], text: Bool) -> [UInt8] {
        guard text else { return message }
        guard let frame = try? GHFrame(jsonUTF8Bytes: message), let bytes = try? frame.serializedBytes() as [UInt8] else { return [] }
        return bytes
    }
}
