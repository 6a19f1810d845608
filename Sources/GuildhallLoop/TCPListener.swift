// A listening TCP socket that hands each accepted connection to a closure.
// Loop thread only.

import CLibUV

public struct ListenError: Error, CustomStringConvertible {
    public let description: String
}

public final class TCPListener {
    private let handle: UnsafeMutablePointer<uv_tcp_t>
    private let loop: EventLoop
    private var onConnection: ((TCPConnection) -> Void)?
    /// The port actually bound (useful after binding port 0).
    public private(set) var port = 0

    public init(loop: EventLoop, host: String, port: Int, backlog: Int32 = 511,
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
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { uv_tcp_bind(handle, $0, 0) }
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
