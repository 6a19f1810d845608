// The servers a benchmark runs against, each started as a child process on
// a free loopback port and stopped (by its own PID) afterwards: Guildhall
// (this binary's `serve`, on a data folder filled with one server), Debian's
// redis-server and nats-server, and the trivial sink.

import Foundation
import GuildhallCore
import GuildhallLoop
import GuildhallServer
import GuildhallStore
import Synchronization

enum BenchTargetKind: String, CaseIterable {
    case guildhall, redis, nats, sink
}

final class RunningTarget {
    let kind: BenchTargetKind
    let process: Process
    let port: Int
    let folder: String?
    let wire: BenchWire

    init(kind: BenchTargetKind, process: Process, port: Int, folder: String?, wire: BenchWire) {
        self.kind = kind; self.process = process; self.port = port; self.folder = folder; self.wire = wire
    }

    /// Resident memory of the server process, in bytes.
    var residentBytes: Int {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kb = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kb * 1024
    }

    /// Peak resident memory of the server process, in bytes.
    var peakResidentBytes: Int {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kb = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kb * 1024
    }

    /// CPU time the server process has used (user + system), in seconds.
    var cpuSeconds: Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        // Fields after the command name: state is field 3, utime 14, stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func stop() {
        if process.isRunning {
            // redis-server and nats-server inherit this process's blocked
            // signal mask and so ignore SIGTERM; they hold nothing to keep.
            kill(process.processIdentifier, kind == .guildhall ? SIGTERM : SIGKILL)
            // Foundation's waitUntilExit can miss the exit of a child whose
            // output goes to /dev/null; waitpid is exact.
            var status: Int32 = 0
            waitpid(process.processIdentifier, &status, 0)
        }
        if let folder { try? FileManager.default.removeItem(atPath: folder) }
    }
}

enum BenchTargets {
    static let secret = "bench-secret"
    static let serverID: UInt64 = 1
    static let channelID: UInt64 = 2

    /// This executable, to start the sink from.
    static var selfPath: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// The product binary measured and tested (`serve`, `client`): `GUILDHALL_BIN`, else
    /// the `guildhall` built beside this executable (the same build).
    static var serverPath: String {
        if let bin = ProcessInfo.processInfo.environment["GUILDHALL_BIN"], !bin.isEmpty { return bin }
        return URL(fileURLWithPath: selfPath).deletingLastPathComponent().appendingPathComponent("guildhall").path
    }

    /// Starts `kind`; `members` fills Guildhall's server, `sinkRecords` sizes the sink's streams.
    static func start(_ kind: BenchTargetKind, members: Int = 0, subscribers: Int = 0, publishers: Int = 0,
                      sinkRecords: Int = 0, roles: Int = 0, extraSettings: [String] = []) throws -> RunningTarget {
        switch kind {
        case .guildhall:
            let folder = NSTemporaryDirectory() + "guildhall-bench-\(UUID().uuidString)"
            try populate(folder: folder, members: members, subscribers: subscribers, publishers: publishers, roles: roles)
            var args = ["serve", "--data", folder, "--listen", "127.0.0.1:0", "--set", "secret=\(secret)",
                        "--set", "log-level=warn", "--set", "small-server-threshold=10", "--set", "admin-listen=", "--set", "ws-listen="] + Settings.unlimitedFlags
            for s in extraSettings { args += ["--set", s] }
            let (process, port) = try launch(serverPath, args, portFrom: "guildhall listening on 127.0.0.1:")
            return RunningTarget(kind: kind, process: process, port: port, folder: folder,
                                 wire: GuildhallWire(secret: Array(secret.utf8), server: serverID, channel: channelID))
        case .redis:
            let port = try freePort()
            let process = try launch(find("redis-server"), ["--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                                             "--protected-mode", "no", "--maxclients", "20000"], waitPort: port)
            return RunningTarget(kind: kind, process: process, port: port, folder: nil, wire: RedisWire())
        case .nats:
            let port = try freePort()
            let process = try launch(find("nats-server"), ["-a", "127.0.0.1", "-p", "\(port)"], waitPort: port)
            return RunningTarget(kind: kind, process: process, port: port, folder: nil, wire: NatsWire())
        case .sink:
            let (process, port) = try launch(selfPath, ["bench", "sink-server"], portFrom: "sink listening on 127.0.0.1:")
            return RunningTarget(kind: kind, process: process, port: port, folder: nil, wire: SinkWire(recordsPerSubscriber: sinkRecords))
        }
    }

    /// The ids of a populated server's channels: `channelID`, then 1001, 1002...
    static func channelIDs(_ count: Int) -> [UInt64] { [channelID] + (1..<max(count, 1)).map { 1000 + UInt64($0) } }

    /// Writes a server with `members` members (including the bench's subscribers m0... and publishers p0...) and `channels` channels.
    /// With `roles`, the server also has that many roles, each with an override on the channel; every
    /// member holds three of them and has its own override on the server and on the channel, so that
    /// each send's check walks every level.
    static func populate(folder: String, members: Int, subscribers: Int, publishers: Int, roles: Int = 0, channels: Int = 1) throws {
        let now = systemClock()
        var writes: [StoreWrite] = [
            .directory(.serverSaved(ServerRecord(id: serverID, name: "bench", icon: "", custom: "", owner: "owner", openJoin: true, createdAt: now))),
            .directory(.memberSaved(MemberRecord(serverID: serverID, userID: "owner", role: .owner, joinedAt: now))),
        ] + RoleRecord.starting(server: serverID, at: now).map { .directory(.roleSaved($0)) }
        for (n, id) in channelIDs(channels).enumerated() {
            writes.append(.directory(.channelSaved(ChannelRecord(id: id, serverID: serverID, name: n == 0 ? "general" : "c\(n)", topic: "", custom: "", createdAt: now))))
        }
        let ids = (0..<RoleID(roles)).map { $0 + 2 }
        for id in ids {
            writes.append(.directory(.roleSaved(RoleRecord(serverID: serverID, id: id, name: "role \(id)", position: UInt32(id),
                                                           permissions: PermissionOverride(allow: [.sendMessages, .mention]), createdAt: now))))
            writes.append(.directory(.overrideSaved(OverrideRecord(serverID: serverID, channelID: channelID, target: .role(id),
                                                                   permissions: PermissionOverride(allow: .mention, deny: .mentionEveryone)))))
        }
        let users = (0..<publishers).map { "p\($0)" } + (0..<max(subscribers, members - publishers - 1)).map { "m\($0)" }
        for (n, user) in users.enumerated() {
            let held = ids.isEmpty ? [] : Array(Set((0..<3).map { ids[(n * 3 + $0 * 7) % ids.count] })).sorted()
            writes.append(.directory(.memberSaved(MemberRecord(serverID: serverID, userID: user, role: .member, joinedAt: now, roles: held))))
            guard !ids.isEmpty else { continue }
            for channel in [0, channelID] {
                writes.append(.directory(.overrideSaved(OverrideRecord(serverID: serverID, channelID: channel, target: .member(user),
                                                                       permissions: PermissionOverride(allow: .sendMessages)))))
            }
        }
        try write(folder: folder, [writes])
    }

    /// Settings for a server run inside the bench on `folder` (ServiceHandle): loopback on a
    /// free port, no admin or WebSocket listener, limits off, quiet.
    static func inProcessSettings(folder: String) -> Settings {
        var settings = Settings()
        settings.unlimited()
        settings.adminListen = ""
        settings.wsListen = ""
        settings.listen = "127.0.0.1:0"
        settings.data = folder
        settings.secret = secret
        settings.logLevel = "warn"
        return settings
    }

    /// Commits each batch of writes straight into the store in `folder`, one transaction each.
    static func write(folder: String, _ batches: [[StoreWrite]]) throws {
        let done = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        let store = try Store(StoreOptions(folder: folder), onCommitted: { outcomes in
            if let e = outcomes.first(where: { $0.error != nil })?.error { failure.withLock { $0 = e.description } }
            done.signal()
        }, onRead: { _ in })
        for (i, writes) in batches.enumerated() {
            store.writer.submit(WriteJob(ticket: UInt64(i + 1), writes: writes))
            done.wait()
        }
        store.close()
        if let f = failure.withLock({ $0 }) { throw BenchError("populating the bench data failed: \(f)") }
    }

    static func find(_ name: String) throws -> String {
        for dir in ["/usr/bin", "/usr/sbin", "/usr/local/bin"] where FileManager.default.isExecutableFile(atPath: "\(dir)/\(name)") {
            return "\(dir)/\(name)"
        }
        throw BenchError("\(name) not found: apt-get install -y \(name) (make bench installs it)")
    }

    /// Starts a process and reads the port it prints after `marker`.
    /// `errors`: where its standard error goes (default: this process's).
    static func launch(_ path: String, _ args: [String], portFrom marker: String, errors: FileHandle = .standardError) throws -> (Process, Int) {
        let (p, ports) = try launch(path, args, portsFrom: [marker], errors: errors)
        return (p, ports[0])
    }

    /// Starts a process and reads the port it prints after each of `markers` (each on a line of its
    /// own, read once the line is complete: a pipe may hand over half a number).
    static func launch(_ path: String, _ args: [String], portsFrom markers: [String], errors: FileHandle = .standardError) throws -> (Process, [Int]) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = errors
        let text = Mutex("")
        let found = DispatchSemaphore(value: 0)
        @Sendable func ports(_ t: String) -> [Int]? {
            let lines = t.split(separator: "\n", omittingEmptySubsequences: false).dropLast()  // the last is not complete
            let ports = markers.compactMap { marker in
                lines.lazy.compactMap { line in line.range(of: marker).flatMap { r in Int(line[r.upperBound...].prefix(while: \.isNumber)) } }.first
            }
            return ports.count == markers.count ? ports : nil
        }
        out.fileHandleForReading.readabilityHandler = { h in
            let chunk = String(decoding: h.availableData, as: UTF8.self)
            if text.withLock({ $0 += chunk; return ports($0) != nil }) { found.signal() }
            if chunk.isEmpty { h.readabilityHandler = nil }
        }
        try p.run()
        // Polled, so a process that dies before it listens is told at once, with its status.
        let deadline = Date().addingTimeInterval(60)
        while found.wait(timeout: .now() + 0.1) != .success {
            if !p.isRunning {
                throw BenchError("\(path) exited with status \(p.terminationStatus) before it listened; it printed: \(text.withLock { $0 })")
            }
            if Date() > deadline {
                let threads = threadStates(p.processIdentifier)
                p.terminate()
                throw BenchError("\(path) did not start listening within 60 s; it printed: \(text.withLock { $0 }); its threads: \(threads)")
            }
        }
        out.fileHandleForReading.readabilityHandler = nil
        return (p, ports(text.withLock { $0 })!)
    }

    /// Each thread of `pid` as name, state and the kernel function it waits in (from /proc):
    /// where a process that does not start is stuck.
    static func threadStates(_ pid: Int32) -> String {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.sorted().map { tid in
            let read = { (file: String) in (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/\(file)", encoding: .utf8)) ?? "?" }
            let stat = read("stat"), state = stat.lastIndex(of: ")").map { String(stat[stat.index($0, offsetBy: 2)]) } ?? "?"
            return "\(read("comm").trimmingCharacters(in: .whitespacesAndNewlines)) \(state) \(read("wchan"))"
        }.joined(separator: ", ")
    }

    /// Starts a process and waits until `port` accepts connections.
    static func launch(_ path: String, _ args: [String], waitPort port: Int) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = args
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if canConnect(port) { return p }
            usleep(20_000)
        }
        p.terminate()
        throw BenchError("\(path) did not listen on \(port) within 30 s")
    }

    static func canConnect(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = in_port_t(UInt16(port).bigEndian)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &a) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    static func freePort() throws -> Int {
        guard let port = SocketAddress.freeLoopbackPort() else { throw BenchError("no free port") }
        return port
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
