// A listening TCP socket that hands each accepted connection to a closure.
// Loop thread only.

import CLibUV
import Glibc

public struct ListenError: Error, CustomStringConvertible {
    public let description: String
}

public final class TCPListener {
    private let handle: UnsafeMutablePointer<uv_tcp_t>
    private let loop: EventLoop
    private var onConnection: ((TCPConnection) -> Void)?
    /// The port actually bound (useful after binding port 0).
    public private(set) var port = 0

    /// `reusePort`: bind with SO_REUSEPORT, so that one listener per loop
    /// can share the address and the kernel spreads connections over them
    /// (libuv 1.44 has no flag for it: the socket is made here and handed to libuv).
    public init(loop: EventLoop, host: String, port: Int, backlog: Int32 = 511, reusePort: Bool = false,
                onConnection: @escaping (TCPConnection) -> Void) throws {
        self.loop = loop
        self.onConnection = onConnection
        handle = allocateHandle(uv_tcp_t.self)
        uv_tcp_init(loop.raw, handle)
        handle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        guard var address = SocketAddress.make(host: host, port: port) else {
            closeAndFree(handle)
            throw ListenError(description: "cannot parse listen address \(host):\(port)")
        }
        var rc = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { reusePort ? Self.bindSharing(handle, $0) : uv_tcp_bind(handle, $0, 0) }
        }
        if rc == 0 {
            rc = uv_listen(asStream(handle), backlog) { server, status in
                guard let server, let data = server.pointee.data, status == 0 else { return }
                Unmanaged<TCPListener>.fromOpaque(data).takeUnretainedValue().accept()
            }
        }
        guard rc == 0 else {
            closeAndFree(handle)
            throw ListenError(description: "cannot listen on \(host):\(port): \(UVError.text(rc))")
        }
        var bound = sockaddr_storage()
        var len = Int32(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &bound) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { uv_tcp_getsockname(handle, $0, &len) }
        }
        self.port = SocketAddress.port(&bound)
    }

    /// A socket bound with SO_REUSEADDR and SO_REUSEPORT, opened as `handle`; 0 or a libuv error.
    private static func bindSharing(_ handle: UnsafeMutablePointer<uv_tcp_t>, _ address: UnsafePointer<sockaddr>) -> Int32 {
        let family = Int32(address.pointee.sa_family)
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return -errno }
        var on: Int32 = 1
        let size = socklen_t(family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        guard setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size)) == 0,
              setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, socklen_t(MemoryLayout<Int32>.size)) == 0,
              bind(fd, address, size) == 0 else {
            let error = -errno
            Glibc.close(fd)
            return error
        }
        let rc = uv_tcp_open(handle, uv_os_sock_t(fd))
        if rc != 0 { Glibc.close(fd) }
        return rc
    }

    private func accept() {
        let conn = TCPConnection(loop: loop.raw)
        guard uv_accept(asStream(handle), asStream(conn.handle)) == 0 else {
            conn.abort()
            return
        }
        uv_tcp_nodelay(conn.handle, 1)
        onConnection?(conn)
    }

    /// Stops accepting; established connections are untouched.
    public func close() {
        onConnection = nil
        handle.pointee.data = nil
        closeAndFree(handle)
    }
}
