// The real `guildhall` binary as a child process, for tests that must kill
// it (-9) or signal it. Only processes started here are ever signalled.

import Foundation
import Synchronization
@testable import GuildhallServer

/// Foundation's `Process.run()` on Linux is not safe to call from two threads
/// at once (seen: a crash in its memcpy while tests ran in parallel), so every
/// launch in the tests goes through this lock.
private let launching = Mutex(())

func launch(_ p: Process) throws {
    try launching.withLock { _ in try p.run() }
}

enum Binary {
    /// .build/debug/guildhall of this package, built by `swift build` (and so by `make test`).
    static var path: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/debug/guildhall").path
    }

    /// Runs the binary to completion with `input` on stdin; returns (exit code, stdout).
    static func run(_ arguments: [String], input: String = "", environment: [String: String] = [:]) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        p.environment = env
        let stdin = Pipe(), stdout = Pipe()
        p.standardInput = stdin
        p.standardOutput = stdout
        p.standardError = FileHandle.nullDevice
        try launch(p)
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: out, as: UTF8.self))
    }
}

final class ServerProcess: Sendable {
    let process: Locked<Process>
    let port: Int

    /// Starts `guildhall serve` on 127.0.0.1:0 over `folder` and waits until it listens.
    init(folder: String, arguments: [String] = []) async throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Binary.path)
        p.arguments = ["serve", "--data", folder, "--listen", "127.0.0.1:0", "--set", "secret=\(testSecret)", "--set", "log-level=warn"] + arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        let text = Locked("")
        out.fileHandleForReading.readabilityHandler = { h in
            let chunk = String(decoding: h.availableData, as: UTF8.self)
            text.withLock { $0 += chunk }
        }
        try launch(p)
        process = Locked(p)
        port = try await waitFor("the server to listen") {
            let t = text.withLock { $0 }
            guard let range = t.range(of: "listening on 127.0.0.1:") else { return nil }
            return Int(t[range.upperBound...].prefix { $0.isNumber })
        }
    }

    var pid: Int32 { process.withLock { $0.processIdentifier } }

    /// A test that ends early (a failed expectation, a thrown error) must not
    /// leave its server running: kill the child it started, by its PID.
    deinit {
        let p = process.withLock { $0 }
        if p.isRunning {
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
        }
    }

    func signal(_ sig: Int32) { kill(pid, sig) }

    /// Waits for exit; returns the exit status.
    func wait() -> Int32 {
        let p = process.withLock { $0 }
        p.waitUntilExit()
        return p.terminationStatus
    }
}
