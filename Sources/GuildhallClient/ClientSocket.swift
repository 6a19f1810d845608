// A blocking TCP socket for the SDK's connection thread: connect with a
// timeout (and a TLS handshake that verifies the server), send whole
// buffers, poll and receive. POSIX only; no event loop, so an application
// embeds the SDK without running one. With TLS every byte goes through one
// TLSStream under a lock: the connection thread reads while others send.
//
// The descriptor is closed only when the last reference goes: callers on
// other threads (requests, `close`) may still hold the socket when the
// connection thread ends it, and a number closed under them could by then
// belong to another socket of the process (an embedding server's, in tests).
// Ending a connection is `shutdown`, which any thread may call.

import Foundation
import GuildhallTLS
import Synchronization

final class ClientSocket: Sendable {
    let fd: Int32
    /// TLS, and the plaintext read but not yet taken.
    private final class Channel: Sendable {
        let state: Mutex<(stream: TLSStream, plain: [UInt8])>
        init(_ stream: TLSStream) { state = Mutex((stream, [])) }
    }

    private let tls: Channel?

    private init(fd: Int32, tls: TLSStream? = nil) {
        self.fd = fd
        self.tls = tls.map(Channel.init)
    }

    deinit { Glibc.close(fd) }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Connects to host:port within `timeoutMs`, with TLS when `tls` says so.
    static func connect(host: String, port: Int, timeoutMs: Int32, tls: ClientTLS?) throws(Failure) -> ClientSocket {
        let plain = try connect(host: host, port: port, timeoutMs: timeoutMs)
        guard let tls else { return plain }
        let stream: TLSStream
        do {
            stream = try TLSStream(context: TLSContext.client(caFile: tls.caFile), host: tls.serverName ?? host)
            try stream.start()
            guard plain.sendRaw(stream.outgoing()) else { throw TLSError("the connection ended") }
            var buffer = [UInt8](repeating: 0, count: 16 << 10)
            let deadline = Date().addingTimeInterval(Double(timeoutMs) / 1000)
            while !stream.handshakeDone {
                let left = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
                guard left > 0, let n = plain.receiveRaw(timeoutMs: left, into: &buffer) else { throw TLSError("no answer to the handshake") }
                var ignored: [UInt8] = [], failure: TLSError?
                buffer.withUnsafeBytes { b in
                    do throws(TLSError) { try stream.receive(UnsafeRawBufferPointer(rebasing: b[0..<n]), into: &ignored) } catch { failure = error }
                }
                if let failure { throw failure }
                guard plain.sendRaw(stream.outgoing()) else { throw TLSError("the connection ended") }
            }
        } catch let error as TLSError {
            throw Failure(description: "TLS with \(host):\(port) failed: \(error.description)")
        } catch {
            throw Failure(description: "TLS with \(host):\(port) failed: \(error)")
        }
        return ClientSocket(fd: dup(plain.fd), tls: stream)
    }

    /// Connects to host:port within `timeoutMs`.
    private static func connect(host: String, port: Int, timeoutMs: Int32) throws(Failure) -> ClientSocket {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            throw Failure(description: "cannot resolve \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var ai: UnsafeMutablePointer<addrinfo>? = first
        while let a = ai {
            ai = a.pointee.ai_next
            let fd = socket(a.pointee.ai_family, a.pointee.ai_socktype, a.pointee.ai_protocol)
            if fd < 0 { continue }
            let flags = fcntl(fd, F_GETFL)
            _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
            var r = Glibc.connect(fd, a.pointee.ai_addr, a.pointee.ai_addrlen)
            if r != 0 && errno == EINPROGRESS {
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                r = poll(&p, 1, timeoutMs) == 1 ? 0 : -1
                var soError: Int32 = 0
                var len = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &len)
                if r == 0 && soError != 0 { r = -1; errno = soError }
                if r != 0 && soError == 0 { errno = ETIMEDOUT }
            }
            if r == 0 {
                _ = fcntl(fd, F_SETFL, flags)
                var one: Int32 = 1
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                return ClientSocket(fd: fd)
            }
            lastError = String(cString: strerror(errno))
            Glibc.close(fd)
        }
        throw Failure(description: "cannot connect to \(host):\(port): \(lastError)")
    }

    /// Sends every byte (encrypted, with TLS); false when the connection failed.
    func sendAll(_ bytes: [UInt8]) -> Bool {
        guard let tls else { return sendRaw(bytes) }
        return tls.state.withLock { t in
            let sent: Bool = bytes.withUnsafeBytes { b in (try? t.stream.send(b)) != nil }
            return sent && sendRaw(t.stream.outgoing())
        }
    }

    private func sendRaw(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
    }

    /// Waits up to `timeoutMs` for bytes (decrypted, with TLS); returns how many, 0 on timeout, nil when the connection ended.
    func receive(timeoutMs: Int32, into buffer: inout [UInt8]) -> Int? {
        guard let tls else { return receiveRaw(timeoutMs: timeoutMs, into: &buffer) }
        if let n = takePlain(tls, into: &buffer) { return n }
        var raw = [UInt8](repeating: 0, count: buffer.count)
        guard let n = receiveRaw(timeoutMs: timeoutMs, into: &raw) else { return nil }
        let ended = tls.state.withLock { t -> Bool in
            let broke: Bool = raw.withUnsafeBytes { b in
                do throws(TLSError) { try t.stream.receive(UnsafeRawBufferPointer(rebasing: b[0..<n]), into: &t.plain) } catch { return true }
                return false
            }
            return broke || !sendRaw(t.stream.outgoing()) || (t.plain.isEmpty && t.stream.peerClosed)
        }
        if ended { return nil }
        return takePlain(tls, into: &buffer) ?? 0
    }

    /// Plaintext already decrypted, moved into `buffer`: how many bytes, nil when there is none.
    private func takePlain(_ tls: Channel, into buffer: inout [UInt8]) -> Int? {
        tls.state.withLock { t -> Int? in
            guard !t.plain.isEmpty else { return nil }
            let n = min(t.plain.count, buffer.count)
            buffer.replaceSubrange(0..<n, with: t.plain[0..<n])
            t.plain.removeFirst(n)
            return n
        }
    }

    private func receiveRaw(timeoutMs: Int32, into buffer: inout [UInt8]) -> Int? {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&p, 1, timeoutMs)
        if ready == 0 || (ready < 0 && errno == EINTR) { return 0 }
        if ready < 0 { return nil }
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 && (errno == EINTR || errno == EAGAIN) { return 0 }
        return n > 0 ? n : nil
    }

    /// Wakes a thread blocked in `receive` and ends the connection.
    func shutdown() { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
}
