// A blocking TCP socket for the SDK's connection thread: connect with a
// timeout, send whole buffers, poll and receive. POSIX only; no event loop,
// so an application embeds the SDK without running one.
//
// The descriptor is closed only when the last reference goes: callers on
// other threads (requests, `close`) may still hold the socket when the
// connection thread ends it, and a number closed under them could by then
// belong to another socket of the process (an embedding server's, in tests).
// Ending a connection is `shutdown`, which any thread may call.

import Foundation

final class ClientSocket: Sendable {
    let fd: Int32

    private init(fd: Int32) { self.fd = fd }

    deinit { Glibc.close(fd) }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Connects to host:port within `timeoutMs`.
    static func connect(host: String, port: Int, timeoutMs: Int32) throws(Failure) -> ClientSocket {
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

    /// Sends every byte; false when the connection failed.
    func sendAll(_ bytes: [UInt8]) -> Bool {
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

    /// Waits up to `timeoutMs` for bytes; returns them, [] on timeout, nil when the connection ended.
    func receive(timeoutMs: Int32, into buffer: inout [UInt8]) -> Int? {
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
