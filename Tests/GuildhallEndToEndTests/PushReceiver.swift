// A push gateway for the tests: an HTTP/1.1 listener on 127.0.0.1 that keeps
// every POST it is sent (headers and body) and answers each with the next
// status a test queued (200 when none is). One thread; each connection is
// read whole, answered, and closed. Stopped by the test that started it.

import Foundation
import Glibc
@testable import GuildhallServer

final class PushReceiver: @unchecked Sendable {
    struct Post: Sendable {
        let headers: [String: String]
        let body: Data
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body) as? [String: Any]) ?? [:] }
        var notices: [[String: Any]] { (json["notifications"] as? [[String: Any]]) ?? [] }
    }

    let port: Int
    private let fd: Int32
    private let posts = Locked<[Post]>([])
    private let statuses = Locked<[Int]>([])
    private let thread: Thread

    init() throws {
        let (fd, port) = try loopbackListener(for: "the push receiver")
        self.fd = fd
        self.port = port
        let listener = fd, posts = self.posts, statuses = self.statuses
        thread = Thread { Self.serve(listener, posts, statuses) }
        thread.start()
    }

    var url: String { "http://127.0.0.1:\(port)/push" }

    /// What was posted so far, in order.
    var received: [Post] { posts.withLock { $0 } }

    /// The next posts are answered with these statuses, in turn.
    func answer(_ codes: Int...) { statuses.withLock { $0 += codes } }

    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }

    private static func serve(_ listener: Int32, _ posts: Locked<[Post]>, _ statuses: Locked<[Int]>) {
        while true {
            let c = accept(listener, nil, nil)
            if c < 0 { return }
            var bytes = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 65_536)
            var headerEnd: Int?, length = 0
            while headerEnd == nil || bytes.count < headerEnd! + length {
                let n = read(c, &buffer, buffer.count)
                if n <= 0 { break }
                bytes += buffer[0..<n]
                if headerEnd == nil, let r = bytes.indices.dropLast(3).first(where: { bytes[$0] == 13 && bytes[$0 + 1] == 10 && bytes[$0 + 2] == 13 && bytes[$0 + 3] == 10 }) {
                    headerEnd = r + 4
                    for line in String(decoding: bytes[0..<r], as: UTF8.self).split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
                        length = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
                    }
                }
            }
            if let end = headerEnd {
                var headers: [String: String] = [:]
                for line in String(decoding: bytes[0..<end], as: UTF8.self).split(separator: "\r\n").dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                posts.withLock { $0.append(Post(headers: headers, body: Data(bytes[end..<min(bytes.count, end + length)]))) }
            }
            let status = statuses.withLock { $0.isEmpty ? 200 : $0.removeFirst() }
            let reply = Array("HTTP/1.1 \(status) X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
            _ = reply.withUnsafeBytes { write(c, $0.baseAddress, $0.count) }
            close(c)
        }
    }
}
