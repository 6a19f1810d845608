// Parsing "host:port" into a sockaddr and describing one back, for IPv4 and IPv6.

import CLibUV
import Glibc

public enum SocketAddress {
    /// A loopback port free at the moment of asking (the kernel picks it),
    /// for tests and benchmarks that start servers of their own; nil when
    /// no socket can be bound.
    public static func freeLoopbackPort() -> Int? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &a) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        return ok ? Int(UInt16(bigEndian: a.sin_port)) : nil
    }

    /// Splits "127.0.0.1:7400", "[::1]:7400" or ":7400" into host and port.
    public static func split(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        guard let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.isEmpty { host = "0.0.0.0" }
        return (host, port)
    }

    static func make(host: String, port: Int) -> sockaddr_storage? {
        var storage = sockaddr_storage()
        let ok = withUnsafeMutablePointer(to: &storage) { p -> Bool in
            if host.contains(":") {
                return p.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { uv_ip6_addr(host, Int32(port), $0) == 0 }
            }
            return p.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { uv_ip4_addr(host, Int32(port), $0) == 0 }
        }
        return ok ? storage : nil
    }

    static func describe(_ storage: UnsafePointer<sockaddr_storage>) -> String {
        var text = [CChar](repeating: 0, count: 64)
        if Int32(storage.pointee.ss_family) == AF_INET6 {
            return storage.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { a in
                uv_ip6_name(a, &text, text.count)
                return "[\(Self.string(text))]:\(UInt16(bigEndian: a.pointee.sin6_port))"
            }
        }
        return storage.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { a in
            uv_ip4_name(a, &text, text.count)
            return "\(Self.string(text)):\(UInt16(bigEndian: a.pointee.sin_port))"
        }
    }

    private static func string(_ chars: [CChar]) -> String {
        String(decoding: chars.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func port(_ storage: UnsafePointer<sockaddr_storage>) -> Int {
        if Int32(storage.pointee.ss_family) == AF_INET6 {
            return storage.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
        }
        return storage.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
    }
}
