// The home loop's links to the other loops (`loops` > 1): their threads, an
// outbox per loop for the commands of each home turn, what each loop last
// reported about its outbound bytes (for publisher pauses), and the order in
// which they close at shutdown. Home loop only; the other loops are reached
// only through their inboxes.

import Dispatch
import Glibc
import GuildhallCore
import GuildhallLoop

final class LoopLinks {
    private var threads: [GatewayThread] = []
    /// By gateway index; none for 0, the home's own loop.
    private var outboxes: [GatewayOutbox?] = [nil]
    /// Per loop, as it last reported: bytes queued on its sessions, and bytes of events it had applied.
    private var queuedByLoop: [Int] = [0]
    private var appliedByLoop: [Int] = [0]
    /// Loops that have not yet closed their sessions at shutdown.
    private var open = 0

    /// Starts a gateway on a loop of its own for each loop past the first,
    /// listening beside `gateway` on its port; every gateway learns how to hand connections to the others.
    func start(_ settings: Settings, beside gateway: Gateway, secret: [UInt8], clock: @escaping @Sendable () -> UInt64,
               homeInbox: LoopInbox<LoopMessage>) throws {
        guard settings.loops > 1 else { return }
        let inboxes = (0..<settings.loops).map { _ in LoopInbox<GatewayMessage>() }
        // A socket whose loop no longer takes messages (shutting down) is closed here.
        let peers: [@Sendable (HandOff) -> Void] = (0..<settings.loops).map { i in
            if i == 0 { return { h in if !homeInbox.post(.handOff(h)) { Glibc.close(h.socket) } } }
            let target = inboxes[i]
            return { h in if !target.post(.handOff(h)) { Glibc.close(h.socket) } }
        }
        gateway.peers = peers
        for i in 1..<settings.loops {
            threads.append(try GatewayLoop.start(index: i, settings: settings, port: gateway.port, secret: secret, clock: clock,
                                                 inbox: inboxes[i], homeInbox: homeInbox, peers: peers))
            outboxes.append(GatewayOutbox(inbox: inboxes[i]))
            queuedByLoop.append(0)
            appliedByLoop.append(0)
        }
    }

    /// The port of session `key` on another loop (the key's low byte), or nil when there is no such loop.
    func port(for key: UInt64) -> (any SessionPort)? {
        let index = Int(key & 0xff)
        guard index > 0, index < outboxes.count, let outbox = outboxes[index] else { return nil }
        return RemoteSession(key: key, outbox: outbox)
    }

    /// Sends each loop what this home turn has for it.
    func postTurn() { for o in outboxes { o?.post() } }

    /// Sends every other loop `message`, after what this turn has for it.
    func broadcast(_ message: GatewayMessage) { for o in outboxes { _ = o?.post(message) } }

    /// Sends every other loop the live settings the home applied; each leaves
    /// `group` once applied (at once for a loop that no longer takes messages).
    func apply(_ settings: Settings, _ group: DispatchGroup?) {
        for o in outboxes {
            guard let o else { continue }
            group?.enter()
            if !o.post(.settings(settings, group)) { group?.leave() }
        }
    }

    // MARK: Publisher pauses

    func reported(queued: Int, applied: Int, from index: Int) {
        queuedByLoop[index] = queued
        appliedByLoop[index] = applied
    }

    /// Bytes the other loops hold for their sessions: what each last reported
    /// queued, plus the event bytes sent to it since it last reported.
    var outboundBytes: Int {
        var bytes = 0
        for (i, o) in outboxes.enumerated() {
            guard let o else { continue }
            bytes += queuedByLoop[i] + (o.sentBytes &- appliedByLoop[i])
        }
        return bytes
    }

    // MARK: Shutdown

    /// Asks every other loop to close its sessions; false when there are none.
    func closeAll() -> Bool {
        open = threads.count
        guard open > 0 else { return false }
        broadcast(.closeAll)
        return true
    }

    /// A loop closed its sessions; returns whether all have.
    func closed() -> Bool {
        open -= 1
        return open == 0
    }

    /// Waits until every other loop's thread has ended (they end once their
    /// sessions have closed); returns the first non-zero uv_loop_close result (a leaked handle), else 0.
    func join() -> Int32 {
        var rc: Int32 = 0
        for t in threads {
            let r = t.join()
            if rc == 0 { rc = r }
        }
        threads.removeAll()
        return rc
    }

    /// Stops loops already started (a start that failed).
    func stop() {
        broadcast(.closeAll)
        _ = join()
    }
}
