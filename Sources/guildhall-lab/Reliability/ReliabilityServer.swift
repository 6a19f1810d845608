// The server under test: this binary's `guildhall serve` in a temporary
// folder, on free loopback ports (client and admin), with the abuse limits
// off unless a test sets them; signalled and stopped by its PID only. After
// each test the runner checks every server it started for leaks (`finishAll`)
// once the test's own clients are gone: no connection and no queued byte
// left, then SIGTERM and exit status 0 (every loop closed with
// uv_loop_close == 0 and no store statement left busy, which the server's
// exit status reports).

import Foundation
import Glibc
import GuildhallCore
import GuildhallServer

final class ReliabilityServer {
    private(set) var process: Process
    private(set) var port: Int
    private(set) var adminPort: Int
    let folder: String
    private let settings: [String]
    private let unlimited: Bool
    private let fileLimit: Int?
    static let secret = "reliability-secret"

    /// Run once the server is stopped and its folder removed (a test's own clean-up, such as an unmount).
    var afterwards: (() -> Void)?

    /// Its log (standard error), when `keepLog`: the lines it wrote so far.
    private let logPath: String?
    var logLines: [Substring] {
        guard let logPath, let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n")
    }

    /// `fileLimit`: the server's RLIMIT_NOFILE (through Debian's prlimit, which execs it: same PID);
    /// `folder`: its data folder (default: a new temporary one); `keepLog`: its log goes to a
    /// file (`logLines`) instead of the runner's standard error.
    init(_ settings: [String] = [], unlimited: Bool = true, fileLimit: Int? = nil, folder: String? = nil, keepLog: Bool = false) throws {
        self.folder = folder ?? NSTemporaryDirectory() + "guildhall-reliability-\(UUID().uuidString)"
        logPath = keepLog ? NSTemporaryDirectory() + "guildhall-reliability-\(UUID().uuidString).log" : nil
        self.settings = settings
        self.unlimited = unlimited
        self.fileLimit = fileLimit
        (process, port, adminPort) = try Self.start(self.folder, settings, unlimited, fileLimit, logPath)
        Self.started.append(self)
    }

    /// Servers started by the test that runs now (the runner is one thread).
    nonisolated(unsafe) private static var started: [ReliabilityServer] = []

    /// The leak check of every server the last test started, then their end; the problems found.
    static func finishAll() -> [String] {
        defer { started = [] }
        return started.flatMap { $0.finish() }
    }

    private func finish() -> [String] {
        var problems: [String] = []
        if process.isRunning {
            var connections: Double?, queued: Double?
            let by = Date().addingTimeInterval(5)
            repeat {
                connections = metric("guildhall_connections")
                queued = metric("guildhall_outbound_queued_bytes")
                if connections == 0 && queued == 0 { break }
                usleep(100_000)
            } while Date() < by
            if connections != 0 { problems.append("\(connections.map { "\(Int($0))" } ?? "?") connections left") }
            if queued != 0 { problems.append("\(queued.map { "\(Int($0))" } ?? "?") bytes still queued") }
            signal(SIGTERM)
            let status = waitExit(timeout: 15)
            if status != 0 {
                problems.append("exit status \(status.map { "\($0)" } ?? "none (killed)") at SIGTERM ("
                                + (status == 3 ? "store statements left busy)" : "a loop not closed cleanly)"))
            }
            if status == nil { signal(SIGKILL); process.waitUntilExit() }
        } else if process.terminationReason == .exit && process.terminationStatus != 0 {
            problems.append("exited with status \(process.terminationStatus)")
        }
        try? FileManager.default.removeItem(atPath: folder)
        if let logPath { try? FileManager.default.removeItem(atPath: logPath) }
        afterwards?()
        afterwards = nil
        return problems
    }

    private static func start(_ folder: String, _ settings: [String], _ unlimited: Bool, _ fileLimit: Int?, _ logPath: String?) throws -> (Process, Int, Int) {
        // The admin port too is the kernel's choice, read from what the server prints: a port
        // picked here could be taken (by a client's ephemeral port) before the server binds it.
        var args = ["serve", "--data", folder, "--listen", "127.0.0.1:0", "--set", "secret=\(Self.secret)", "--set", "log-level=error",
                    "--set", "admin-listen=127.0.0.1:0", "--set", "ws-listen="]
        if unlimited { args += Settings.unlimitedFlags }
        for s in settings { args += ["--set", s] }
        let (path, all) = fileLimit.map { ("/usr/bin/prlimit", ["--nofile=\($0):\($0)", BenchTargets.serverPath] + args) } ?? (BenchTargets.serverPath, args)
        var errors = FileHandle.standardError
        if let logPath, FileManager.default.createFile(atPath: logPath, contents: nil), let file = FileHandle(forWritingAtPath: logPath) {
            file.seekToEndOfFile()
            errors = file
        }
        let (process, ports) = try BenchTargets.launch(path, all, portsFrom: ["guildhall listening on 127.0.0.1:", "admin listening on 127.0.0.1:"],
                                                       errors: errors)
        return (process, ports[0], ports[1])
    }

    /// kill -9, then the server again on the same folder (new ports).
    func crashAndRestart() throws {
        signal(SIGKILL)
        try restart()
    }

    /// The server again on the same folder (new ports), once the old process is gone.
    func restart() throws {
        process.waitUntilExit()
        (process, port, adminPort) = try Self.start(folder, settings, unlimited, fileLimit, logPath)
    }

    func token(_ user: String, device: String = "probe") -> String {
        AccessToken(user: user, device: device, expiry: UInt64(Date().timeIntervalSince1970) + 3600).signed(with: Array(Self.secret.utf8))
    }

    func signal(_ s: Int32) { Glibc.kill(process.processIdentifier, s) }

    /// CPU seconds the server used so far (user + system, from /proc).
    var cpuSeconds: Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Resident memory now, in bytes (VmRSS).
    var residentBytes: Int {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kib = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
        return kib * 1024
    }

    /// Open file descriptors now.
    var openFiles: Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/fd").count) ?? 0 }

    /// Waits for the process to exit (at most `timeout`); its exit status, nil if it did not.
    func waitExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// A counter or gauge from /metrics (summed over its labels), nil when unreadable.
    func metric(_ name: String) -> Double? {
        guard let text = AdminProbe.get("/metrics", port: adminPort) else { return nil }
        var total: Double?
        for line in text.split(separator: "\n") where line.hasPrefix(name) && !line.hasPrefix("#") {
            let rest = line.dropFirst(name.count)
            guard rest.first == " " || rest.first == "{" else { continue }
            if let v = line.split(separator: " ").last.flatMap({ Double($0) }) { total = (total ?? 0) + v }
        }
        return total
    }

    /// For a test's `defer`: the runner's leak check stops the server once the test's clients are gone.
    func stop() {}

    /// Stops it now (no leak check).
    func terminateNow() {
        if process.isRunning {
            signal(SIGTERM)
            if waitExit(timeout: 15) == nil { signal(SIGKILL); process.waitUntilExit() }
        }
        try? FileManager.default.removeItem(atPath: folder)
        if let logPath { try? FileManager.default.removeItem(atPath: logPath) }
        afterwards?()
        afterwards = nil
    }

    deinit { terminateNow() }
}

/// A plain HTTP GET to the admin endpoint.
enum AdminProbe {
    static func get(_ path: String, port: Int) -> String? {
        guard let c = try? ProbeClient(port: port) else { return nil }
        c.send(Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8))
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            var p = pollfd(fd: c.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 200) > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { recv(c.fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        let text = String(decoding: bytes, as: UTF8.self)
        return text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) }
    }
}
