// WebSocket messages read from a byte stream, sans I/O (README "Web client"):
// bytes in as they arrive, whole messages out. The parsing is Debian's
// wslay, driven through its event API: it unmasks, joins fragments, answers
// pings, checks the protocol (a client's frames must be masked, control
// frames short, text valid UTF-8) and the message size limit, and queues the
// close frame a violation calls for (1002, 1007, 1009). What wslay wants
// written back (pongs, closes) comes out as bytes for the caller's own
// write queue; the server's data frames never pass through wslay, whose
// queue copies every message (WebSocketFrames builds those). One reader per
// connection; any one thread at a time.

import CWSLay

public final class WebSocketReader {
    /// What one call to `feed` produced.
    public struct Output: Sendable, Equatable {
        /// Whole data messages, in order: text (UTF-8) or binary.
        public var messages: [(text: Bool, payload: [UInt8])] = []
        /// Bytes to write back to the peer, in order (pongs, a close).
        public var reply: [UInt8] = []
        /// The peer sent a close (its code, 0 for none); the reply holds the answering close.
        public var peerClosed: UInt16?
        /// The stream broke the protocol or the size limit: the reply holds the close, and the connection ends after it.
        public var failed = false

        public static func == (a: Output, b: Output) -> Bool {
            a.messages.map(\.text) == b.messages.map(\.text) && a.messages.map(\.payload) == b.messages.map(\.payload)
                && a.reply == b.reply && a.peerClosed == b.peerClosed && a.failed == b.failed
        }
    }

    /// The largest message accepted (it may change, as after a login); a longer one is closed with 1009.
    public var maxMessageBytes: Int {
        didSet { wslay_event_config_set_max_recv_msg_length(context, UInt64(maxMessageBytes)) }
    }
    private var context: OpaquePointer?
    private var input: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)
    private var output = Output()

    public init(maxMessageBytes: Int) {
        self.maxMessageBytes = maxMessageBytes
        var callbacks = wslay_event_callbacks()
        callbacks.recv_callback = { _, buf, len, _, user in
            let me = Unmanaged<WebSocketReader>.fromOpaque(user!).takeUnretainedValue()
            return me.take(into: buf!, max: len)
        }
        callbacks.send_callback = { _, data, len, _, user in
            let me = Unmanaged<WebSocketReader>.fromOpaque(user!).takeUnretainedValue()
            me.output.reply.append(contentsOf: UnsafeBufferPointer(start: data, count: len))
            return len
        }
        callbacks.on_msg_recv_callback = { _, arg, user in
            let me = Unmanaged<WebSocketReader>.fromOpaque(user!).takeUnretainedValue()
            me.received(arg!.pointee)
        }
        var ctx: OpaquePointer?
        _ = wslay_event_context_server_init(&ctx, &callbacks, Unmanaged.passUnretained(self).toOpaque())
        context = ctx
        wslay_event_config_set_max_recv_msg_length(ctx, UInt64(maxMessageBytes))
    }

    deinit { wslay_event_context_free(context) }

    /// Reads what `bytes` completes; keeps the rest for the next call.
    public func feed(_ bytes: UnsafeRawBufferPointer) -> Output {
        output = Output()
        input = bytes
        defer { input = UnsafeRawBufferPointer(start: nil, count: 0) }
        let read = wslay_event_recv(context)
        if wslay_event_want_write(context) != 0 { _ = wslay_event_send(context) }
        // On a violation wslay queues its close and stops reading, without an error.
        if read != 0 || (wslay_event_want_read(context) == 0 && output.peerClosed == nil) { output.failed = true }
        // For a frame that breaks RFC 6455 at the framing level (a control
        // frame over 125 bytes or fragmented, a length with its top bit set)
        // wslay closes without a status; the peer is told 1002 instead.
        if output.failed, output.reply.suffix(2) == [0x88, 0x00] {
            output.reply.removeLast(2)
            output.reply += [0x88, UInt8(2 + Self.protocolError.count), 0x03, 0xEA] + Self.protocolError
        }
        return output
    }

    public func feed(_ bytes: [UInt8]) -> Output { bytes.withUnsafeBytes { feed($0) } }

    private static let protocolError = Array("protocol error".utf8)

    /// Queues a close frame of our own for the reply of the next `feed` or `flushClose`.
    public func close(code: UInt16, reason: String) -> [UInt8] {
        output = Output()
        var text = Substring(reason)
        while text.utf8.count > 123 { text = text.dropLast() }
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBufferPointer { wslay_event_queue_close(context, code, $0.baseAddress, $0.count) }
        _ = wslay_event_send(context)
        return output.reply
    }

    private func take(into buf: UnsafeMutablePointer<UInt8>, max: Int) -> Int {
        guard !input.isEmpty else {
            wslay_event_set_error(context, Int32(WSLAY_ERR_WOULDBLOCK.rawValue))
            return -1
        }
        let n = min(max, input.count)
        UnsafeMutableRawPointer(buf).copyMemory(from: input.baseAddress!, byteCount: n)
        input = UnsafeRawBufferPointer(rebasing: input[n...])
        return n
    }

    private func received(_ arg: wslay_event_on_msg_recv_arg) {
        let payload = Array(UnsafeBufferPointer(start: arg.msg, count: arg.msg_length))
        switch UInt32(arg.opcode) {
        case WSLAY_TEXT_FRAME.rawValue: output.messages.append((true, payload))
        case WSLAY_BINARY_FRAME.rawValue: output.messages.append((false, payload))
        case WSLAY_CONNECTION_CLOSE.rawValue: output.peerClosed = arg.status_code
        default: break
        }
    }
}
