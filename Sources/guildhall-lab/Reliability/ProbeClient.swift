// A plain blocking client for the reliability tests: connects to 127.0.0.1,
// writes frames (or raw bytes), reads frames with a deadline, and tells how
// the stream ended. Deliberately not the SDK: the tests need a client that
// can be silent, frozen, rude or still writing. It acknowledges offline
// packages only (they hold live events until then).

import Foundation
import Glibc
import GuildhallWire

final class ProbeClient {
    let fd: Int32
    private var decoder = FrameDecoder(maxFrameBytes: 16 << 20)
    private(set) var ended = false
    private(set) var lastEventSeq: UInt64 = 0
    /// Every byte received, when set (to search what the server sent).
    var captured: [UInt8]?
    private var nextID: UInt64 = 100

    /// `receiveBuffer`: SO_RCVBUF before connecting (a small one makes a client slow to take bytes);
    /// `from`: the loopback address to connect from (127.0.0.0/8 is all this host's), for a second peer address.
    init(port: Int, receiveBuffer: Int32? = nil, from: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        if let from {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(from)
            _ = withUnsafePointer(to: &local) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            close(fd)
            throw BenchError("connect to 127.0.0.1:\(port) failed: errno \(errno)")
        }
    }

    deinit { close(fd) }

    /// Sends bytes; without waiting when `dontWait` (what does not fit is dropped, as a writer that keeps going).
    func send(_ bytes: [UInt8], dontWait: Bool = false) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | (dontWait ? MSG_DONTWAIT : 0))) }
    }

    func send(_ body: GHRequest.OneOf_Body, id: UInt64? = nil) -> UInt64 {
        let id = id ?? { nextID += 1; return nextID }()
        var f = GHFrame()
        f.request.id = id
        f.request.body = body
        send(FrameEncoding.framed(f))
        return id
    }

    /// Sends a request and waits for its answer (events before it are read and dropped).
    @discardableResult
    func call(_ body: GHRequest.OneOf_Body, timeout: Double = 10) -> GHResponse? {
        let id = send(body)
        let deadline = Date().addingTimeInterval(timeout)
        while let f = next(until: deadline) { if case .response(let r)? = f.kind, r.id == id { return r } }
        return nil
    }

    func login(_ token: String) -> GHLoginResult? {
        var l = GHLogin()
        l.token = token
        guard case .login(let r)? = call(.login(l))?.result else { return nil }
        return r
    }

    /// The next frame before `deadline`; nil at the deadline or when the stream ended.
    func next(until deadline: Date) -> GHFrame? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            if let payload = try? decoder.next() {
                let frame = try? GHFrame(serializedBytes: payload)
                if let seq = frame?.event.seq, seq != 0 { lastEventSeq = seq }
                // The end of an offline package: acknowledged as the SDK does, or the
                // server holds the rest of the sync and every live event after it.
                if let e = frame?.event, e.offline && e.left == 0 {
                    var ack = GHAck()
                    ack.eventSeq = e.seq
                    _ = send(.ack(ack))
                }
                return frame ?? GHFrame()
            }
            if ended { return nil }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return nil }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, Int32(left * 1000) + 1) <= 0 { continue }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { ended = true } else {
                decoder.feed(Array(buffer[0..<n]))
                captured?.append(contentsOf: buffer[0..<n])
            }
        }
    }

    /// Reads until the stream ends or `deadline`; returns the close reasons seen and the frames read.
    func readToEnd(until deadline: Date) -> (reasons: [GHCloseReason], frames: Int) {
        var reasons: [GHCloseReason] = [], frames = 0
        while let f = next(until: deadline) {
            frames += 1
            if case .closed(let c)? = f.event.body { reasons.append(c.reason) }
        }
        return (reasons, frames)
    }
}

extension ProbeClient {
    /// Creates a server (open to join unless `invited`) with one channel; returns their ids.
    func createGuild(_ name: String, channel: String, invited: Bool = false, guests: Bool = false) throws -> (server: UInt64, channel: UInt64) {
        var create = GHCreateServer()
        create.name = name
        create.openJoin = !invited
        create.allowGuests = guests
        guard case .server(let g)? = call(.createServer(create))?.result else { throw BenchError("createServer failed") }
        var c = GHCreateChannel()
        c.serverID = g.serverID
        c.name = channel
        guard case .channel(let ch)? = call(.createChannel(c))?.result else { throw BenchError("createChannel failed") }
        return (g.serverID, ch.channelID)
    }

    /// Joins the server (unless `join` is false) and subscribes to the channel's messages (as a guest: `type` .guestChannel).
    func joinAndSubscribe(server: UInt64, channel: UInt64, join: Bool = true, type: GHSubscriptionType = .channelMsg) {
        if join {
            var j = GHJoinServer()
            j.serverID = server
            call(.joinServer(j))
        }
        var sub = GHSubscribe()
        sub.type = type
        var t = GHSubscriptionTarget()
        t.serverID = server
        t.channelID = channel
        sub.targets = [t]
        call(.subscribe(sub))
    }

    /// The channel's whole history, oldest first (nil when a page was refused).
    func history(channel: UInt64) -> [GHChannelMessage]? {
        var all: [GHChannelMessage] = [], after: UInt64 = 0
        while true {
            var history = GHGetHistory()
            history.channelID = channel
            history.seq = after
            history.direction = .after
            history.limit = 100
            guard case .messages(let page)? = call(.getHistory(history))?.result else { return nil }
            all += page.messages
            guard let last = page.messages.last?.seq, page.moreAvailable else { return all }
            after = last
        }
    }

    /// Sends a text message; its answer.
    @discardableResult
    func sendText(_ text: String, to channel: UInt64, needReceipt: Bool = false) -> GHResponse? {
        var send = GHSendMessage()
        send.channelID = channel
        send.body.text = text
        send.needReceipt = needReceipt
        return call(.sendMessage(send))
    }

    /// The next channel message pushed to this session before `deadline` (other frames are dropped).
    func nextMessage(until deadline: Date) -> GHChannelMessage? {
        while let f = next(until: deadline) { if case .message(let m)? = f.event.body { return m } }
        return nil
    }

    /// An answer as one line: "error <code> <message>", "ok <result>", or "no answer".
    static func text(_ r: GHResponse?) -> String {
        guard let r else { return "no answer" }
        if case .error(let e)? = r.result { return "error \(e.code.rawValue) \(e.message)" }
        return "ok \(r.result.map { "\($0)" } ?? "")"
    }

    /// Reads at most `bytes` that have arrived (without waiting), then acknowledges every event
    /// complete so far; the channel messages among them.
    func take(bytes: Int) -> [GHChannelMessage] {
        var buffer = [UInt8](repeating: 0, count: min(bytes, 1 << 20))
        var left = bytes
        while left > 0 {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, min(left, $0.count), Int32(MSG_DONTWAIT)) }
            if n == 0 { ended = true }
            guard n > 0 else { break }
            decoder.feed(Array(buffer[0..<n]))
            left -= n
        }
        var messages: [GHChannelMessage] = []
        while let payload = try? decoder.next() {
            guard let f = try? GHFrame(serializedBytes: payload) else { continue }
            if f.event.seq != 0 { lastEventSeq = f.event.seq }
            if case .message(let m)? = f.event.body { messages.append(m) }
        }
        var ack = GHAck()
        ack.eventSeq = lastEventSeq
        _ = send(.ack(ack))
        return messages
    }
}
