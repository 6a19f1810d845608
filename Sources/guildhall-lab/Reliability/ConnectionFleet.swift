// Many client connections from the runner on one libuv loop, for the tests
// that need thousands at once (R1, B2, L3): opened at a set rate (at most 256
// connecting at a time, so the listener's backlog never overflows), each
// sending its first bytes once connected; frames read back and kept per
// connection (logged in, errors, close reasons, when it ended); heartbeats
// timed. The test drives it in steps: queue work, then `run(for:until:)`.
// Everything targets 127.0.0.1; connections are reset (no TIME_WAIT left
// behind) when the fleet is done.

import Foundation
import GuildhallLoop
import GuildhallWire

final class ConnectionFleet {
    final class Member {
        let index: Int
        var connection: TCPConnection?
        var decoder = FrameDecoder(maxFrameBytes: 16 << 20)
        var loggedIn = false
        var errors: [GHError] = []
        var closeReasons: [GHCloseReason] = []
        /// Monotonic nanoseconds: when its first bytes went out, when the server's end came.
        var sentAt: UInt64 = 0
        var endedAt: UInt64 = 0
        /// The outstanding heartbeat's send time (0: none).
        var pingSentAt: UInt64 = 0
        var connectFailed = false
        /// The last event's seq.
        var lastEventSeq: UInt64 = 0
        /// Waiting to connect (again).
        var queued = false
        /// Connections it opened so far.
        var attempts = 0

        init(index: Int) { self.index = index }
        var ended: Bool { endedAt != 0 }
    }

    let loop = EventLoop()
    private(set) var port: Int
    private(set) var members: [Member] = []
    /// Heartbeat round trips (request to pong).
    var roundTrips = LatencyHistogram()
    private var waiting: [(Member, [UInt8])] = []
    /// Reconnections waiting for their time (monotonic nanoseconds).
    private var delayed: [(at: UInt64, member: Member, hello: [UInt8])] = []
    private var connecting = 0
    /// Connections opened per second (set by `open`; a storm sets it high).
    var openRate = 1000
    private var openCredit = 0.0
    private var lastTick: UInt64 = 0
    private var nextRequest: UInt64 = 1000

    init(port: Int) { self.port = port }

    /// The server moved (restarted on new ports): later connections go to `port`.
    func retarget(_ port: Int) { self.port = port }

    /// Queues `count` new connections, opened at `perSecond`, each sending `hello(index)` once connected.
    @discardableResult
    func open(_ count: Int, perSecond: Int, hello: (Int) -> [UInt8]) -> [Member] {
        openRate = perSecond
        let added = (0..<count).map { Member(index: members.count + $0) }
        members += added
        waiting += added.map { m in
            m.queued = true
            return (m, hello(m.index))
        }.reversed()
        return added
    }

    /// Opens `member` again (after its end) with `hello`, `afterMillis` from now.
    func reopen(_ member: Member, hello: [UInt8], afterMillis: Int = 0) {
        member.connection?.abort()
        member.connection = nil
        member.decoder = FrameDecoder(maxFrameBytes: 16 << 20)
        member.loggedIn = false
        member.errors = []
        member.closeReasons = []
        member.endedAt = 0
        member.pingSentAt = 0
        member.connectFailed = false
        member.queued = true
        delayed.append((BenchRecord.monotonicNanos() + UInt64(afterMillis) * 1_000_000, member, hello))
    }

    /// Runs the loop until `done()` holds (checked every 10 ms) or `seconds` pass; whether it held.
    @discardableResult
    func run(for seconds: Double, until done: () -> Bool = { false }) -> Bool {
        let deadline = BenchRecord.monotonicNanos() + UInt64(seconds * 1e9)
        var finished = false
        lastTick = 0  // the rate's credit grows only while the fleet runs, not in the pause before
        withoutActuallyEscaping(done) { done in
            let timer = LoopTimer(loop: loop)
            timer.start(afterMillis: 1, repeatMillis: 10) { [unowned self] in
                self.openDue()
                if done() { finished = true }
                if finished || BenchRecord.monotonicNanos() >= deadline { self.loop.stop() }
            }
            loop.run()
            timer.close()
            loop.runOnce()
        }
        return finished
    }

    /// Sends `member` a heartbeat, timed until its pong (one outstanding at a time).
    func heartbeat(_ member: Member) {
        guard member.pingSentAt == 0, let c = member.connection, !member.ended else { return }
        nextRequest += 1
        var f = GHFrame()
        f.request.id = nextRequest
        f.request.heartbeat = GHHeartbeat()
        member.pingSentAt = BenchRecord.monotonicNanos()
        c.enqueue(FrameEncoding.framed(f))
        c.flush()
    }

    func send(_ bytes: [UInt8], to member: Member) {
        guard let c = member.connection, !member.ended else { return }
        c.enqueue(bytes)
        c.flush()
    }

    /// Resets every connection (the clients vanish at once) and lets libuv release them.
    func abortAll() {
        for m in members {
            m.connection?.abort()
            m.connection = nil
            if m.endedAt == 0 { m.endedAt = BenchRecord.monotonicNanos() }
        }
        run(for: 0.05)
    }

    /// Resets everything and closes the loop.
    func finish() {
        waiting.removeAll()
        abortAll()
        _ = loop.close()
    }

    private func openDue() {
        let now = BenchRecord.monotonicNanos()
        if !delayed.isEmpty {
            for d in delayed where d.at <= now { waiting.append((d.member, d.hello)) }
            delayed.removeAll { $0.at <= now }
        }
        if lastTick != 0 { openCredit = min(openCredit + Double(now - lastTick) / 1e9 * Double(openRate), Double(openRate)) }
        lastTick = now
        while connecting < 256 && openCredit >= 1, let (member, hello) = waiting.popLast() {
            openCredit -= 1
            connecting += 1
            connect(member, hello)
        }
    }

    private func connect(_ member: Member, _ hello: [UInt8]) {
        member.queued = false
        member.attempts += 1
        TCPConnection.connect(loop: loop, host: "127.0.0.1", port: port) { [unowned self] conn, _ in
            self.connecting -= 1
            guard let conn else {
                member.connectFailed = true
                member.endedAt = BenchRecord.monotonicNanos()
                return
            }
            member.connection = conn
            conn.onRead = { [unowned self] bytes in self.read(bytes, member) }
            conn.onEnd = { _ in
                if member.endedAt == 0 { member.endedAt = BenchRecord.monotonicNanos() }
                member.connection?.abort()
                member.connection = nil
            }
            conn.startReading()
            member.sentAt = BenchRecord.monotonicNanos()
            conn.enqueue(hello)
            conn.flush()
        }
    }

    private func read(_ bytes: UnsafeRawBufferPointer, _ member: Member) {
        member.decoder.feed(Array(bytes))
        while let payload = try? member.decoder.next() {
            guard let f = try? GHFrame(serializedBytes: payload) else { continue }
            switch f.kind {
            case .response(let r)?:
                switch r.result {
                case .login?: member.loggedIn = true
                case .pong? where member.pingSentAt != 0:
                    roundTrips.record(BenchRecord.monotonicNanos() - member.pingSentAt)
                    member.pingSentAt = 0
                case .error(let e)?: member.errors.append(e)
                default: break
                }
            case .event(let e)?:
                if case .closed(let c)? = e.body { member.closeReasons.append(c.reason) }
                if e.seq != 0 { member.lastEventSeq = e.seq }
                // The end of an offline package: acknowledged, as the SDK does (the rest waits for it).
                if e.offline && e.left == 0 {
                    var ack = GHFrame()
                    ack.request.id = 2
                    ack.request.ack.eventSeq = member.lastEventSeq
                    send(FrameEncoding.framed(ack), to: member)
                }
            default: break
            }
        }
    }
}

extension ConnectionFleet {
    /// A login request (id 1) for `user`, framed.
    static func login(_ token: String) -> [UInt8] {
        var f = GHFrame()
        f.request.id = 1
        f.request.login.token = token
        return FrameEncoding.framed(f)
    }
}
