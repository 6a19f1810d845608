// A listening TCP socket on 127.0.0.1 with a free port, for the tests' own
// small servers (the push receiver, the silent listener). Touches nothing else.

import Glibc

/// Binds and listens on 127.0.0.1, port chosen by the kernel; throws (naming `what`) when it cannot.
func loopbackListener(for what: String, backlog: Int32 = 16) throws -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    var a = sockaddr_in()
    a.sin_family = sa_family_t(AF_INET)
    a.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard bound == 0, listen(fd, backlog) == 0 else { close(fd); throw WaitTimeout(what: "a port for \(what)") }
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
    return (fd, Int(UInt16(bigEndian: a.sin_port)))
}
