// Starting and stopping a Guildhall server from other code: `guildhall serve`
// runs it on the main thread; tests run it on a thread of its own, on
// 127.0.0.1:0 with a temporary data folder.

import Foundation
import GuildhallCore
import GuildhallLoop
import Synchronization

/// The wall clock in Unix milliseconds.
public let systemClock: @Sendable () -> UInt64 = {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return UInt64(ts.tv_sec) * 1000 + UInt64(ts.tv_nsec) / 1_000_000
}

public enum ServerSecret {
    /// The configured secret, or the one in <data>/secret, created on first use.
    public static func resolve(_ settings: Settings) throws -> [UInt8] {
        if !settings.secretFile.isEmpty {
            guard settings.secret.isEmpty else { throw SettingsError(description: "set secret or secret-file, not both") }
            return Array(try Settings.secret(inFile: settings.secretFile, for: "secret-file").utf8)
        }
        if !settings.secret.isEmpty { return Array(settings.secret.utf8) }
        let folder = settings.data
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = (folder as NSString).appendingPathComponent("secret")
        if let existing = FileManager.default.contents(atPath: path), !existing.isEmpty {
            return Array(String(decoding: existing, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).utf8)
        }
        let hex = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        guard FileManager.default.createFile(atPath: path, contents: Data(hex.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw SettingsError(description: "cannot write \(path)")
        }
        return Array(hex.utf8)
    }
}

/// A server running on a thread of its own.
public final class ServiceHandle: Sendable {
    /// The port the listener bound.
    public let port: Int
    /// The admin endpoint's port (0 when `admin-listen` is empty).
    public let adminPort: Int
    /// The WebSocket listener's port (0 when `ws-listen` is empty).
    public let webSocketPort: Int
    private let trigger: @Sendable () -> Void
    private let settingsTrigger: @Sendable (Settings) -> Void
    private let finished = DispatchSemaphore(value: 0)
    private let result = Locked<Int32?>(nil)

    /// Starts the server and returns once it listens (or throws why it could not).
    public init(settings given: Settings, clock: @escaping @Sendable () -> UInt64 = systemClock) throws {
        let settings = try given.completed()
        let secret = try ServerSecret.resolve(settings)
        let started = DispatchSemaphore(value: 0)
        let outcome = Locked<Result<(Int, Int, Int, @Sendable () -> Void, @Sendable (Settings) -> Void), any Error>?>(nil)
        let finished = self.finished
        let result = self.result
        NamedThread.start("gh-loop-0") {
            let service: Node
            do {
                service = try Node(settings: settings, secret: secret, clock: clock)
            } catch {
                outcome.withLock { $0 = .failure(error) }
                started.signal()
                finished.signal()
                return
            }
            outcome.withLock { $0 = .success((service.port, service.adminPort, service.webSocketPort, service.shutdownTrigger, service.settingsTrigger)) }
            started.signal()
            let rc = service.run()
            result.withLock { $0 = rc }
            finished.signal()
        }
        started.wait()
        switch outcome.withLock({ $0 })! {
        case .success(let (port, adminPort, webSocketPort, trigger, settingsTrigger)):
            self.port = port
            self.adminPort = adminPort
            self.webSocketPort = webSocketPort
            self.trigger = trigger
            self.settingsTrigger = settingsTrigger
        case .failure(let error):
            throw error
        }
    }

    /// Applies the live settings of `settings` (as SIGHUP does for `serve`);
    /// returns once they apply.
    public func update(_ settings: Settings) { settingsTrigger(settings) }

    /// Shuts down gracefully and waits until the loop has closed. Returns
    /// uv_loop_close's result: 0 when no handle leaked.
    @discardableResult
    public func stop() -> Int32 {
        trigger()
        finished.wait()
        finished.signal()
        return result.withLock { $0 } ?? -1
    }
}

/// Runs a server on the calling thread until SIGTERM or SIGINT; for `guildhall serve`.
public enum ServeMain {
    /// `reload` re-reads the configuration on SIGHUP; its live settings apply at once.
    /// `onListening` gets the client port, the WebSocket port and the admin port (0: none).
    public static func run(settings given: Settings, reload: @escaping () throws -> Settings, onListening: (_ port: Int, _ webSocketPort: Int, _ adminPort: Int) -> Void) throws -> Int32 {
        let settings = try given.completed()
        let secret = try ServerSecret.resolve(settings)
        // The first loop turns on this thread: a dispatch worker under `guildhall serve`'s async
        // main, so named like the others; the main thread keeps the process's name (`pgrep guildhall`).
        if !Thread.isMainThread { NamedThread.nameCurrent("gh-loop-0") }
        let service = try Node(settings: settings, secret: secret, clock: systemClock)
        // A SIGHUP re-reads file, environment and flags, then the files they name and the admin's overrides.
        service.watchSignals(reload: { try reload().completed() })
        service.first.log.info("listening", ["addr": settings.listen, "port": service.port, "node": settings.nodeID,
                                             "admin_port": service.adminPort, "ws_port": service.webSocketPort])
        onListening(service.port, service.webSocketPort, service.adminPort)
        return service.run()
    }
}

/// A value behind a lock, shareable between threads.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}
