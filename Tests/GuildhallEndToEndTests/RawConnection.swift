// A bare TCP connection for bad-input tests: send any bytes, read frames
// back with a deadline, see whether the server closed the connection.

import Foundation
import GuildhallLoop
import GuildhallTLS
import GuildhallWire

final class RawConnection {
    let fd: Int32
    private var decoder = FrameDecoder(maxFrameBytes: 1 << 20)
    private(set) var peerClosed = false
    /// The seq of the last event read.
    private(set) var lastEventSeq: UInt64 = 0
    /// Presence frames come whenever members of a small server come and go
    /// (docs/features.md "Presence"): tests that read frames in order pass over them unless they ask.
    var skipsPresence = true

    /// `receiveBuffer`: a small kernel receive buffer, so that a reader that stops reading backs up the server quickly.
    /// `from`: a loopback source address (127.0.0.2…), to come from another peer address.
    init(port: Int, receiveBuffer: Int32? = nil, from source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { throw WaitTimeout(what: "bind \(source)") }
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { throw WaitTimeout(what: "connect") }
    }

    deinit { close(fd) }

    /// TLS, once `startTLS` made it: frames go through it both ways.
    private var tls: TLSStream?

    /// Speaks TLS from now on, as a client trusting `caFile` and expecting `host`; the handshake is done here.
    func startTLS(caFile: String, host: String = "localhost", timeout: Double = 5) throws {
        let stream = try TLSStream(context: TLSContext.client(caFile: caFile), host: host)
        try stream.start()
        sendRaw(stream.outgoing())
        let deadline = Date().addingTimeInterval(timeout)
        while !stream.handshakeDone {
            let bytes = receive(timeout: deadline.timeIntervalSinceNow)
            guard !bytes.isEmpty else { throw WaitTimeout(what: "the TLS handshake") }
            var plain: [UInt8] = [], failure: TLSError?
            bytes.withUnsafeBytes { b in
                do throws(TLSError) { try stream.receive(b, into: &plain) } catch { failure = error }
            }
            if let failure { throw failure }
            sendRaw(stream.outgoing())
        }
        tls = stream
    }

    func send(_ bytes: [UInt8]) {
        guard let tls else { return sendRaw(bytes) }
        bytes.withUnsafeBytes { try? tls.send($0) }
        sendRaw(tls.outgoing())
    }

    private func sendRaw(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Bytes read, decrypted when the connection speaks TLS.
    private func incoming(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        guard let tls else { return Array(bytes) }
        var plain: [UInt8] = []
        Array(bytes).withUnsafeBytes { b in
            do throws(TLSError) { try tls.receive(b, into: &plain) } catch { peerClosed = true }
        }
        sendRaw(tls.outgoing())
        if tls.peerClosed { peerClosed = true }
        return plain
    }

    func send(_ frame: GHFrame) { send(FrameEncoding.framed(frame)) }

    func send(_ request: GHRequest) {
        var f = GHFrame()
        f.request = request
        send(f)
    }

    func login(_ token: String, id: UInt64 = 1) {
        var r = GHRequest()
        r.id = id
        r.login.token = token
        send(r)
    }

    func resume(_ token: String, sessionID: String, lastEventSeq: UInt64, id: UInt64 = 1) {
        var r = GHRequest()
        r.id = id
        r.resume.token = token
        r.resume.sessionID = sessionID
        r.resume.lastEventSeq = lastEventSeq
        send(r)
    }

    func ack(_ seq: UInt64, id: UInt64 = 99) {
        var r = GHRequest()
        r.id = id
        r.ack.eventSeq = seq
        send(r)
    }

    /// Subscribes to `channel`'s messages as request `id`; the target's status once answered (events before it are passed over).
    @discardableResult
    func subscribeToMessages(server: UInt64, channel: UInt64, id: UInt64) -> GHTargetStatus? {
        var r = GHRequest()
        r.id = id
        r.subscribe.type = .channelMsg
        var t = GHSubscriptionTarget()
        t.serverID = server
        t.channelID = channel
        r.subscribe.targets = [t]
        send(r)
        while let f = nextFrame() {
            if f.response.id == id { return f.response.subscribe.results.first?.status }
        }
        return nil
    }

    /// Whether the server cut the connection (reset or hung up), seen without reading what is queued.
    var wasCut: Bool {
        var p = pollfd(fd: fd, events: 0, revents: 0)
        _ = poll(&p, 1, 0)
        return p.revents & Int16(POLLHUP | POLLERR) != 0
    }

    /// Drops the connection without a word, as a network failure would.
    func cut() { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }

    /// Logs in and reads the answer and the end of offline sync (nothing waits offline).
    @discardableResult
    func loginAndSync(_ token: String, id: UInt64 = 1) -> GHLoginResult? {
        login(token, id: id)
        let answer = nextFrame()?.response.login
        // Offline items are acknowledged package by package, as a client
        // does: a device that logs in again while its last session's final
        // acknowledgement is still on its way (on another loop) gets those items again.
        while let f = nextFrame() {
            if case .syncCompleted? = f.event.body { return answer }
            if case .response? = f.kind { continue }
            guard f.event.offline else { return nil }
            if f.event.left == 0 { ack(f.event.seq) }
        }
        return nil
    }

    /// The next frame, or nil when the connection closed or `timeout` passed.
    func nextFrame(timeout: Double = 5) -> GHFrame? {
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            if let payload = try? decoder.next() {
                let frame = try? GHFrame(serializedBytes: payload)
                if let seq = frame?.event.seq, seq != 0 { lastEventSeq = seq }
                if skipsPresence, case .presence? = frame?.event.body { continue }
                return frame
            }
            if peerClosed { return nil }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return nil }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, Int32(left * 1000) + 1) <= 0 { continue }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { peerClosed = true } else { decoder.feed(incoming(buffer[0..<n])) }
        }
    }

    /// Bytes the peer sends within `timeout` (empty at the deadline or when it closed).
    func receive(timeout: Double) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, Int32(max(0, timeout) * 1000) + 1) > 0 else { return [] }
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 { peerClosed = true }
        return n > 0 ? Array(buffer[0..<n]) : []
    }

    /// Bytes the peer sent that are here now, as text (raw, not frames).
    func readAvailable() -> String {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, 0) > 0 else { return "" }
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : ""
    }

    /// Every byte the peer sends until it closes (or `timeout` passes), as text: for HTTP.
    func readAllUntilClosed(timeout: Double = 5) -> String {
        var all: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, 100) <= 0 { continue }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            all += buffer[0..<n]
        }
        return String(decoding: all, as: UTF8.self)
    }

    /// Reads until the server closes the connection; returns every frame seen.
    func framesUntilClosed(timeout: Double = 5) -> [GHFrame] {
        var frames: [GHFrame] = []
        let deadline = Date().addingTimeInterval(timeout)
        while !peerClosed, Date() < deadline {
            if let f = nextFrame(timeout: deadline.timeIntervalSinceNow) { frames.append(f) }
        }
        return frames
    }
}

extension Array where Element == GHFrame {
    var errors: [GHError] { compactMap { if case .error(let e)? = $0.response.result { e } else { nil } } }
    var closeReasons: [GHCloseReason] { compactMap { if case .closed(let c)? = $0.event.body { c.reason } else { nil } } }
}
