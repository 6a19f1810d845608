// The real `guildhall` binary as a child process, for tests that must kill
// it (-9) or signal it. Only processes started here are ever signalled.

import Foundation
import Synchronization
import Testing
@testable import GuildhallServer

/// A child process started with posix_spawn. Foundation's `Process.run()`
/// crashed the test process now and then (a memcpy fault inside it, with or
/// without other launches at the same moment), so the tests do not use it.
final class Child: Sendable {
    let pid: pid_t
    /// Write end of the child's stdin, read end of its stdout.
    let stdinFD: Int32
    let stdoutFD: Int32
    private let status = Mutex<Int32?>(nil)
    private let inputOpen = Mutex(true)

    struct SpawnError: Error, CustomStringConvertible { let description: String }

    /// Spawns are serialized so that no child inherits another's pipe ends
    /// between `pipe` and marking them close-on-exec.
    private static let spawning = Mutex(())

    /// `errors`: an open file the child's stderr goes to; /dev/null without one.
    convenience init(_ path: String, _ arguments: [String], environment: [String: String], errors: Int32? = nil) throws {
        let (pid, input, output) = try Self.spawning.withLock { _ in try Self.spawn(path, arguments, environment, errors) }
        self.init(pid: pid, stdinFD: input, stdoutFD: output)
    }

    private init(pid: pid_t, stdinFD: Int32, stdoutFD: Int32) {
        self.pid = pid; self.stdinFD = stdinFD; self.stdoutFD = stdoutFD
    }

    private static func spawn(_ path: String, _ arguments: [String], _ environment: [String: String], _ errors: Int32?) throws -> (pid_t, Int32, Int32) {
        // Writing to a child that already ended must fail, not kill the tests.
        signal(SIGPIPE, SIG_IGN)
        var input: [Int32] = [0, 0], output: [Int32] = [0, 0]
        guard pipe(&input) == 0 else { throw SpawnError(description: "pipe failed") }
        guard pipe(&output) == 0 else {
            close(input[0]); close(input[1])
            throw SpawnError(description: "pipe failed")
        }
        for fd in input + output { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        if let errors { posix_spawn_file_actions_adddup2(&actions, errors, 2) } else { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for a in argv { free(a) }
            for e in envp { free(e) }
        }
        var child: pid_t = 0
        let rc = posix_spawn(&child, path, &actions, nil, argv, envp)
        close(input[0])
        close(output[1])
        guard rc == 0 else {
            close(input[1]); close(output[0])
            throw SpawnError(description: "posix_spawn \(path) failed: \(rc)")
        }
        return (child, input[1], output[0])
    }

    deinit {
        closeInput()
        close(stdoutFD)
    }

    func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(stdinFD, $0.baseAddress, $0.count) }
            if n <= 0 { return }
            bytes = bytes.dropFirst(n)
        }
    }

    /// Closes the child's stdin (once).
    func closeInput() {
        inputOpen.withLock { open in
            if open { close(stdinFD) }
            open = false
        }
    }

    /// Reads stdout until the child closes it.
    func readAll() -> String {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(stdoutFD, $0.baseAddress, $0.count) }
            if n > 0 { out += buffer[0..<n] } else if n < 0 && errno == EINTR { continue } else { break }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Waits for the child to end; the exit code, or 128 + the signal that ended it.
    func wait() -> Int32 {
        status.withLock { done in
            if let done { return done }
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
            let code = raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
            done = code
            return code
        }
    }

    var hasExited: Bool {
        status.withLock { done in
            if done != nil { return true }
            var raw: Int32 = 0
            guard waitpid(pid, &raw, WNOHANG) == pid else { return false }
            done = raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
            return true
        }
    }
}

enum Binary {
    /// .build/debug/guildhall of this package, built by `swift build` (and so by `make test`).
    static var path: String { built("guildhall") }
    /// .build/debug/guildhall-lab: the benchmarks and the reliability runner, which start `path`.
    static var labPath: String { built("guildhall-lab") }

    private static func built(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/debug/\(name)").path
    }

    /// Runs the lab binary as `run` runs the product.
    /// The lab binary to completion: (exit code, stdout), with its stderr after stdout when it failed, so a failure says why.
    static func runLab(_ arguments: [String]) throws -> (Int32, String) {
        let path = NSTemporaryDirectory() + "guildhall-lab-\(UUID().uuidString).stderr"
        let errors = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard errors >= 0 else { throw Child.SpawnError(description: "cannot open \(path)") }
        unlink(path)
        defer { close(errors) }
        let child = try Child(labPath, arguments, environment: ProcessInfo.processInfo.environment, errors: errors)
        child.closeInput()
        let out = child.readAll()
        let rc = child.wait()
        guard rc != 0 else { return (rc, out) }
        var text = [UInt8](repeating: 0, count: 1 << 16)
        let n = pread(errors, &text, text.count, 0)
        return (rc, out + "\n--- stderr ---\n" + String(decoding: text.prefix(max(n, 0)), as: UTF8.self))
    }

    /// Runs the binary to completion with `input` on stdin; returns (exit code, stdout).
    static func run(_ arguments: [String], input: String = "", environment: [String: String] = [:], binary: String = path) throws -> (Int32, String) {
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        let child = try Child(binary, arguments, environment: env)
        child.write(input)
        child.closeInput()
        let out = child.readAll()
        return (child.wait(), out)
    }
}

final class ServerProcess: Sendable {
    let child: Child
    let port: Int
    /// Its stderr: a file already unlinked, so nothing is left behind, read through this descriptor.
    private let errors: Int32

    /// Starts `guildhall serve` on `listen` (a free port by default) over `folder` and waits until it listens.
    init(folder: String, listen: String = "127.0.0.1:0", arguments: [String] = []) async throws {
        // Its stderr (the log) in an unlinked file: a server that will not start says why in the error.
        let path = folder + ".stderr"
        let errors = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        unlink(path)
        self.errors = errors
        do {
            let child = try Child(Binary.path, ["serve", "--data", folder, "--listen", listen, "--set", "secret=\(testSecret)",
                                                "--set", "log-level=warn", "--set", "loops=\(testLoops)"] + Settings.unlimitedFlags + ["--set", "admin-listen=", "--set", "ws-listen="] + arguments,
                                  environment: ProcessInfo.processInfo.environment, errors: errors >= 0 ? errors : nil)
            self.child = child
            _ = fcntl(child.stdoutFD, F_SETFL, fcntl(child.stdoutFD, F_GETFL) | O_NONBLOCK)
            var text = ""
            var buffer = [UInt8](repeating: 0, count: 4096)
            port = try await waitFor("the server to listen", timeout: 30) {
                // One that exited (it could not bind its port, say) will not listen: say so at once.
                if child.hasExited {
                    throw Child.SpawnError(description: "the server exited (status \(child.wait())) before listening: \(text) \(Self.tail(of: errors, 800))")
                }
                let n = buffer.withUnsafeMutableBytes { read(child.stdoutFD, $0.baseAddress, $0.count) }
                if n > 0 { text += String(decoding: buffer[0..<n], as: UTF8.self) }
                guard let range = text.range(of: "listening on 127.0.0.1:") else { return nil }
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                return digits.count < text[range.upperBound...].count ? Int(digits) : nil
            }
        } catch {
            // A start that failed is not deinitialized: its log goes here.
            if errors >= 0 { close(errors) }
            throw error
        }
    }

    var pid: Int32 { child.pid }

    /// The end of what the server has logged (its stderr), for a failure's message.
    func logTail(_ bytes: Int = 6000) -> String { Self.tail(of: errors, bytes) }

    /// `step`, whose failure is recorded with the end of the server's log.
    func explaining<T>(_ step: () async throws -> T) async throws -> T {
        do { return try await step() } catch {
            Issue.record("\(error); the server logged:\n\(logTail(12000))")
            throw error
        }
    }

    private static func tail(of fd: Int32, _ bytes: Int) -> String {
        guard fd >= 0 else { return "" }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return "" }
        let start = max(0, Int(info.st_size) - bytes)
        var buffer = [UInt8](repeating: 0, count: Int(info.st_size) - start)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(start)) }
        return String(decoding: buffer.prefix(max(0, n)), as: UTF8.self)
    }

    /// A test that ends early (a failed expectation, a thrown error) must not
    /// leave its server running: kill the child it started, by its PID.
    deinit {
        if !child.hasExited {
            kill(child.pid, SIGKILL)
            _ = child.wait()
        }
        if errors >= 0 { close(errors) }
    }

    func signal(_ sig: Int32) { kill(pid, sig) }

    /// Waits for exit; returns the exit status.
    func wait() -> Int32 { child.wait() }
}
