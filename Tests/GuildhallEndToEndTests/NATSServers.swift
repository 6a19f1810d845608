// nats-server for the cluster tests, started here on free loopback ports
// in temporary folders and stopped by PID: one server with JetStream, or a
// cluster of three (routes between them, JetStream replicated, R3), as
// docs/cluster.md describes. Each waits until it answers (the cluster until its
// JetStream meta group has a leader).

import Foundation
import GuildhallLoop

/// A nats-server with JetStream in a temporary folder.
final class NATSServer {
    let port: Int
    let folder = NSTemporaryDirectory() + "guildhall-nats-\(UUID().uuidString)"
    private let child: Child

    /// The monitoring port (/connz, /varz, /jsz).
    let monitor: Int

    init() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // A port found free may be taken before nats-server binds it (seen in CI,
        // with other tests connecting meanwhile): one that exits is started again on new ports.
        var attempt = 0
        while true {
            attempt += 1
            let (port, monitor) = (try Self.freePort(), try Self.freePort())
            let child = try Child("/usr/sbin/nats-server", ["-a", "127.0.0.1", "-p", "\(port)", "-m", "\(monitor)", "-js", "-sd", folder],
                                  environment: ProcessInfo.processInfo.environment)
            let deadline = Date().addingTimeInterval(20)
            while (try? RawConnection(port: port)) == nil && !child.hasExited && Date() < deadline { usleep(20_000) }
            if (try? RawConnection(port: port)) != nil {
                (self.port, self.monitor, self.child) = (port, monitor, child)
                return
            }
            if !child.hasExited { kill(child.pid, SIGKILL) }
            _ = child.wait()
            guard attempt < 3 else { throw WaitTimeout(what: "nats-server on \(port) (attempt \(attempt))") }
        }
    }

    var url: String { "nats://127.0.0.1:\(port)" }

    /// Messages the server delivered to each named client connection so far (/connz).
    func delivered() -> [String: Int] {
        var out: [String: Int] = [:]
        for c in (NATSCluster.get("/connz?limit=1024", monitor: monitor)?["connections"] as? [[String: Any]]) ?? [] {
            if let name = c["name"] as? String { out[name] = c["out_msgs"] as? Int ?? 0 }
        }
        return out
    }

    func stop() {
        kill(child.pid, SIGTERM)
        _ = child.wait()
        try? FileManager.default.removeItem(atPath: folder)
    }

    deinit { if !child.hasExited { kill(child.pid, SIGKILL); _ = child.wait() } }

    static func freePort() throws -> Int {
        guard let port = SocketAddress.freeLoopbackPort() else { throw WaitTimeout(what: "a free port") }
        return port
    }
}


/// Three nats-servers routed into one cluster with JetStream.
final class NATSCluster {
    struct Member {
        let name: String
        let port: Int
        let monitor: Int
        let child: Child
    }

    let folder = NSTemporaryDirectory() + "guildhall-natsc-\(UUID().uuidString)"
    private(set) var members: [Member] = []

    init() throws {
        // As for one server: a port found free may be taken before its server binds it, and
        // that server exits, so no meta leader is ever elected. A cluster without a leader in
        // 20 s is started again on new ports (seen once in a full run as a 20 s wait for a leader).
        for attempt in 1...3 {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try start(ports: try (0..<9).map { _ in try NATSServer.freePort() })
            let deadline = Date().addingTimeInterval(20)
            var led = false
            while !led && !members.contains(where: { $0.child.hasExited }) && Date() < deadline {
                led = members.allSatisfy { Self.metaLeader(monitor: $0.monitor) != nil }
                if !led { usleep(50_000) }
            }
            if led { return }
            let exited = members.filter { $0.child.hasExited }.map(\.name)
            stop()
            members = []
            guard attempt < 3 else {
                throw WaitTimeout(what: "a JetStream meta leader in the NATS cluster (attempt \(attempt), exited: \(exited))")
            }
        }
    }

    /// Starts three servers: client ports `ports[0..<3]`, monitoring `ports[3..<6]`, routes `ports[6..<9]`.
    private func start(ports: [Int]) throws {
        let routes = (0..<3).map { "nats-route://127.0.0.1:\(ports[6 + $0])" }.joined(separator: ", ")
        for i in 0..<3 {
            let name = "n\(i + 1)"
            let config = """
                server_name: \(name)
                listen: 127.0.0.1:\(ports[i])
                http: 127.0.0.1:\(ports[3 + i])
                jetstream { store_dir: "\(folder)/\(name)" }
                cluster { name: guildhall, listen: 127.0.0.1:\(ports[6 + i]), routes: [\(routes)] }
                """
            let path = "\(folder)/\(name).conf"
            try config.write(toFile: path, atomically: true, encoding: .utf8)
            let child = try Child("/usr/sbin/nats-server", ["-c", path], environment: ProcessInfo.processInfo.environment)
            members.append(Member(name: name, port: ports[i], monitor: ports[3 + i], child: child))
        }
    }

    /// Every server, for `cluster` (a client fails over between them).
    var urls: String { members.map { "nats://127.0.0.1:\($0.port)" }.joined(separator: ",") }

    /// The server leading stream `name`'s raft group, asked of a server still running.
    func streamLeader(_ name: String) -> String? {
        for m in members where !m.child.hasExited {
            guard let json = Self.get("/jsz?streams=true", monitor: m.monitor) else { continue }
            for account in (json["account_details"] as? [[String: Any]]) ?? [] {
                for stream in (account["stream_detail"] as? [[String: Any]]) ?? [] where stream["name"] as? String == name {
                    if let leader = (stream["cluster"] as? [String: Any])?["leader"] as? String { return leader }
                }
            }
        }
        return nil
    }

    /// kill -9 of one server, by its PID.
    func kill9(_ name: String) {
        guard let m = members.first(where: { $0.name == name }), !m.child.hasExited else { return }
        kill(m.child.pid, SIGKILL)
        _ = m.child.wait()
    }

    func stop() {
        for m in members where !m.child.hasExited {
            kill(m.child.pid, SIGTERM)
            _ = m.child.wait()
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    deinit { for m in members where !m.child.hasExited { kill(m.child.pid, SIGKILL); _ = m.child.wait() } }

    static func metaLeader(monitor: Int) -> String? {
        (get("/jsz", monitor: monitor)?["meta_cluster"] as? [String: Any])?["leader"] as? String
    }

    static func get(_ path: String, monitor: Int) -> [String: Any]? {
        let head = "GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"  // 1.0: no chunked answer
        guard let exchange = try? HTTPExchange.send(Array(head.utf8), port: monitor) else { return nil }
        return exchange.json
    }
}
