// One HTTP/1.1 request over TLS to an admin endpoint (`guildhall admin` and
// `guildhall health` with --tls): a blocking socket through GuildhallTLS,
// which verifies the certificate against the CA file given (Foundation's
// URLSession on Linux trusts only the system's CAs). Plain HTTP goes
// through URLSession as before.

import Foundation
import GuildhallTLS

enum HTTPSExchange {
    struct Failure: Error, CustomStringConvertible { let description: String }

    /// Sends `method path` to host:port and returns the status and the body; 10 s at most.
    static func request(_ method: String, host: String, port: Int, path: String, caFile: String?, token: String?, body: Data?) throws -> (Int, String) {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let a = list else { throw Failure(description: "cannot resolve \(host)") }
        defer { freeaddrinfo(list) }
        let fd = socket(a.pointee.ai_family, a.pointee.ai_socktype, a.pointee.ai_protocol)
        guard fd >= 0, connect(fd, a.pointee.ai_addr, a.pointee.ai_addrlen) == 0 else { throw Failure(description: "cannot connect to \(host):\(port)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let tls = try TLSStream(context: TLSContext.client(caFile: caFile), host: host)
        try tls.start()
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\nContent-Length: \(body?.count ?? 0)\r\n"
        if let token, !token.isEmpty { head += "Authorization: Bearer \(token)\r\n" }
        if body != nil { head += "Content-Type: application/json\r\n" }
        let request = Array((head + "\r\n").utf8) + (body.map { Array($0) } ?? [])
        try request.withUnsafeBytes { try tls.send($0) }
        var response: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 16 << 10)
        func write() { let out = tls.outgoing(); _ = out.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
        write()
        while !tls.peerClosed {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            try buffer.withUnsafeBytes { try tls.receive(UnsafeRawBufferPointer(rebasing: $0[0..<n]), into: &response) }
            write()
        }
        let text = String(decoding: response, as: UTF8.self)
        guard let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap({ Int($0) }) else {
            throw Failure(description: "no HTTP answer from \(host):\(port)")
        }
        let bodyStart = text.range(of: "\r\n\r\n")?.upperBound ?? text.endIndex
        return (status, String(text[bodyStart...]))
    }
}
