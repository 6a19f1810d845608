// The client SDK's connection: one thread per client that connects, logs
// in, reads frames, sends heartbeats, times out requests and reconnects with
// backoff. Requests are async calls from any task; events go to listeners on
// the connection thread.
//
// Reconnect policy: after a drop the client reconnects with exponential
// backoff (100 ms doubling to 5 s, with jitter) and resumes its session: the
// server replays the events it missed and keeps its subscriptions. When the
// server can no longer resume it, the client is logged in afresh, offline
// sync runs, and the SDK subscribes again. It stops for good when the user
// calls `close()`, when the session was replaced by another login on the
// same device, or when the login itself is refused (`UNAVAILABLE` excepted:
// no node serves the account for a moment). A login left unanswered for
// `loginTimeoutMs` counts as a drop.

import Foundation
import GuildhallWire
import Synchronization

public struct ClientOptions: Sendable {
    /// Mints or fetches a token for each (re)connect.
    public var token: @Sendable () -> String
    public var autoSubscribe = false
    public var autoReconnect = true
    /// How long a request waits for its answer.
    public var requestTimeoutMs = 10_000
    /// How long a login or resume waits for its answer before the connection
    /// is given up and tried again (a node that hangs, a balancer holding a
    /// dead backend's connection). Generous: a loaded server answers late.
    public var loginTimeoutMs = 30_000
    public var connectTimeoutMs: Int32 = 5_000
    public var clientVersion = "guildhall-swift/0.1"
    /// Resume a dropped session instead of logging in afresh.
    public var resume = true
    /// Acknowledge live events after this many, or after 1 s.
    public var ackEvery = 256
    /// Tell senders of direct messages that this device received them.
    public var deliveryReceipts = true

    /// TLS to the server; nil: plaintext. The server's certificate must verify.
    public var tls: ClientTLS?

    public init(token: @escaping @Sendable () -> String) { self.token = token }
    public init(token: String) { self.token = { token } }
}

/// How the SDK speaks TLS: the server's certificate must chain to the CAs in
/// `caFile` (PEM; nil: the system's), be valid now, and name the host
/// connected to (or `serverName`). There is no way to turn verification off.
public struct ClientTLS: Sendable {
    public var caFile: String?
    public var serverName: String?

    public init(caFile: String? = nil, serverName: String? = nil) {
        self.caFile = caFile
        self.serverName = serverName
    }
}

public final class GuildhallClient: Sendable {
    /// The first address; `addresses` holds every one the client may use.
    public let host: String
    public let port: Int
    /// The nodes of a deployment to connect to, in order: the client stays on
    /// one while it can connect, and moves to the next when connecting fails
    /// or the node closes the session as shutting down or draining.
    public let addresses: [(host: String, port: Int)]
    public let options: ClientOptions

    struct Pending {
        let continuation: CheckedContinuation<GHResponse.OneOf_Result, any Error>
        let deadline: UInt64
    }

    struct State: ~Copyable {
        var socket: ClientSocket?
        var loggedIn = false
        var login: GHLoginResult?
        var closed = false
        var started = false
        var nextID: UInt64 = 1
        var pending: [UInt64: Pending] = [:]
        var connectWaiters: [CheckedContinuation<GHLoginResult, any Error>] = []
        var fatal: (any Error)?
        var listeners: [any GuildhallListener] = []
        var lastEventSeq: UInt64 = 0
        /// Per channel, the highest message seq received since the last acknowledgement (sent with it).
        var receivedUpTo: [UInt64: UInt64] = [:]
        var ackedSeq: UInt64 = 0
        /// The highest inbox cursor delivered: items at or below it are duplicates.
        var cursorSeen: UInt64 = 0
        /// The session to resume after a drop.
        var sessionID = ""
        var loggedOut = false
        var ledger = SubscriptionLedger()
        var autoSubscribe = false
        var logins = 0
        /// Per channel, the highest message seq handed to the listeners (what a gap fill need not fetch).
        var lastSeen: [UInt64: UInt64] = [:]
        /// Channels whose missed messages are being fetched, with their live messages waiting (GapFill.swift).
        var filling: [UInt64: [GHEvent]] = [:]
        /// Channels just filled whose next live message must follow what was handed over (GapFill.swift).
        var checkingNext: Set<UInt64> = []
    }

    let state = Mutex(State())
    private let writeLock = Mutex(())
    private let stopped = DispatchSemaphore(value: 0)
    private let wake = DispatchSemaphore(value: 0)

    public convenience init(host: String = "127.0.0.1", port: Int, options: ClientOptions) {
        self.init(addresses: [(host, port)], options: options)
    }

    /// A client of a deployment of several nodes (docs/cluster.md): `addresses` in the order to try them.
    public init(addresses: [(host: String, port: Int)], options: ClientOptions) {
        precondition(!addresses.isEmpty, "at least one address")
        host = addresses[0].host
        port = addresses[0].port
        self.addresses = addresses
        self.options = options
        state.withLock { $0.autoSubscribe = options.autoSubscribe }
    }

    public convenience init(host: String = "127.0.0.1", port: Int, token: String) {
        self.init(host: host, port: port, options: ClientOptions(token: token))
    }

    deinit { close() }

    public func addListener(_ listener: any GuildhallListener) {
        state.withLock { $0.listeners.append(listener) }
    }

    /// The sequence of the last event received in the current session (kept across a resume).
    public var lastEventSeq: UInt64 { state.withLock { $0.lastEventSeq } }

    /// Whether the client is logged in right now.
    public var isConnected: Bool { state.withLock { $0.loggedIn } }

    /// Connects and logs in; returns when logged in, or throws why not
    /// (a `GuildhallError` from the server, or a `ClientError`).
    @discardableResult
    public func connect() async throws -> GHLoginResult {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<GHLoginResult, any Error>) in
            let action: () -> Void = state.withLock { s in
                if let login = s.login, s.loggedIn { return { c.resume(returning: login) } }
                if let fatal = s.fatal { return { c.resume(throwing: fatal) } }
                if s.closed { return { c.resume(throwing: ClientError.closed) } }
                s.connectWaiters.append(c)
                if s.started { return {} }
                s.started = true
                return { [self] in self.startThread() }
            }
            action()
        }
    }

    /// Closes the connection for good and waits for the connection thread to end.
    public func close() {
        let (socket, wasStarted, loggedIn) = state.withLock { s -> (ClientSocket?, Bool, Bool) in
            let already = s.closed
            s.closed = true
            return (s.socket, s.started && !already, s.loggedIn)
        }
        if let socket, loggedIn {
            // Acknowledges what arrived (the device's sync cursor moves past
            // it), then ends the session now rather than after the resume window.
            var ack = GHFrame()
            ack.request.id = UInt64.max - 1
            ack.request.ack.eventSeq = lastEventSeq
            var logout = GHFrame()
            logout.request.id = UInt64.max - 2
            logout.request.logout = GHLogout()
            _ = write(FrameEncoding.framed(ack) + FrameEncoding.framed(logout), on: socket)
        }
        socket?.shutdown()
        wake.signal()
        if wasStarted { stopped.wait() }
    }

    /// Cuts the connection as a network failure would (for tests of resume);
    /// the client reconnects and resumes as after any drop.
    func simulateNetworkDrop() {
        state.withLock { $0.socket }?.shutdown()
    }

    /// Sends one request and waits for its result; throws `GuildhallError` for a wire error.
    public func call(_ body: GHRequest.OneOf_Body) async throws -> GHResponse.OneOf_Result {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<GHResponse.OneOf_Result, any Error>) in
            let prepared: (ClientSocket, [UInt8])? = state.withLock { s in
                guard let socket = s.socket, s.loggedIn else { return nil }
                let id = s.nextID
                s.nextID += 1
                s.pending[id] = Pending(continuation: c, deadline: Self.nowMillis() + UInt64(options.requestTimeoutMs))
                var frame = GHFrame()
                frame.request.id = id
                frame.request.body = body
                return (socket, FrameEncoding.framed(frame))
            }
            guard let (socket, bytes) = prepared else {
                c.resume(throwing: ClientError.notConnected)
                return
            }
            // A failed send surfaces when the reader sees the connection end.
            _ = writeLock.withLock { _ in socket.sendAll(bytes) }
        }
    }

    // MARK: Connection thread

    private func startThread() {
        let thread = Thread { [self] in
            // Named where `top -H` and perf show it (Foundation's `Thread.name` does not reach Linux's).
            #if os(Linux)
            let fd = open("/proc/thread-self/comm", O_WRONLY)
            if fd >= 0 { _ = Glibc.write(fd, "gh-client", 9); _ = Glibc.close(fd) }
            #endif
            self.runConnection()
            self.stopped.signal()
        }
        thread.start()
    }

    private func runConnection() {
        var backoffMs = 100
        var lastEnd: ClientError = .closed
        var current = 0
        var failedInARow = 0
        while !state.withLock({ $0.closed }) {
            notify { $0.onConnectionStatus(.connecting) }
            var endReason: ClientError = .disconnected("connection lost")
            let (host, port) = addresses[current]
            do {
                let socket = try ClientSocket.connect(host: host, port: port, timeoutMs: options.connectTimeoutMs, tls: options.tls)
                failedInARow = 0
                let installed = state.withLock { s -> Bool in
                    if s.closed { return false }
                    s.socket = socket
                    return true
                }
                if !installed { break }
                let session = ConnectionSession(client: self, socket: socket)
                endReason = session.run()
                if session.loggedIn { backoffMs = 100 }
                state.withLock { $0.socket = nil; $0.loggedIn = false }
                socket.shutdown()
            } catch {
                endReason = .disconnected(error.description)
                failedInARow += 1
            }
            // The next node when this one cannot be reached or is going away.
            var moveOn = failedInARow > 0
            if case .sessionClosed(let reason, _) = endReason, reason == .shuttingDown || reason == .draining { moveOn = true }
            if moveOn, addresses.count > 1 {
                current = (current + 1) % addresses.count
                // The other nodes are tried at once; only a whole round of failures waits.
                if failedInARow > 0, failedInARow < addresses.count {
                    lastEnd = endReason
                    continue
                }
            }
            lastEnd = endReason
            failPending(endReason)
            notify { $0.onConnectionStatus(.disconnected(endReason)) }
            let stop = state.withLock { s -> Bool in
                if s.closed || !options.autoReconnect { return true }
                if case .sessionClosed(let reason, _) = endReason, reason == .replaced || reason == .authFailed || reason == .loggedOut { return true }
                return s.fatal != nil
            }
            if stop { break }
            let jitter = Int.random(in: 0...(backoffMs / 4 + 1))
            _ = wake.wait(timeout: .now() + .milliseconds(backoffMs + jitter))
            backoffMs = min(backoffMs * 2, 5_000)
        }
        let waiters = state.withLock { s -> ([CheckedContinuation<GHLoginResult, any Error>], any Error) in
            s.closed = true
            let w = s.connectWaiters
            s.connectWaiters = []
            return (w, s.fatal ?? lastEnd)
        }
        for c in waiters.0 { c.resume(throwing: waiters.1) }
        notify { $0.onConnectionStatus(.closed) }
    }

    func failPending(_ error: ClientError) {
        let pending = state.withLock { s in
            let p = s.pending
            s.pending = [:]
            return p
        }
        for p in pending.values { p.continuation.resume(throwing: error) }
    }

    func notify(_ body: (any GuildhallListener) -> Void) {
        for l in state.withLock({ $0.listeners }) { body(l) }
    }

    func write(_ bytes: [UInt8], on socket: ClientSocket) -> Bool {
        writeLock.withLock { _ in socket.sendAll(bytes) }
    }

    static func nowMillis() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1000 + UInt64(ts.tv_nsec) / 1_000_000
    }
}
