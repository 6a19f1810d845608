// Listeners of several loops sharing one address with SO_REUSEPORT (docs/architecture.md,
// docs/cluster.md): each loop accepts on its own socket and the kernel spreads
// the connections over them.

import Foundation
import GuildhallLoop
import Synchronization
import Testing
@testable import GuildhallServer

@Suite struct LoopListenerTests {
    /// One loop on its own thread with a reuse-port listener; counts what it accepts.
    final class AcceptingLoop: Sendable {
        let accepted = Atomic<Int>(0)
        let port = Atomic<Int>(0)
        let stop = LoopInbox<Bool>()
        private let ready = DispatchSemaphore(value: 0)
        private let done = DispatchSemaphore(value: 0)

        /// `onConnection`: what to do with each accepted connection (by default: close it).
        init(port wanted: Int, onConnection: (@Sendable (TCPConnection) -> Void)? = nil) throws {
            let failure = Locked<String?>(nil)
            let thread = Thread { [self] in
                let loop = EventLoop()
                // The loop's connections live as long as the loop (a server's sessions hold theirs).
                var kept: [TCPConnection] = []
                do {
                    let listener = try TCPListener(loop: loop, host: "127.0.0.1", port: wanted, reusePort: true) { [self] c in
                        accepted.add(1, ordering: .relaxed)
                        kept.append(c)
                        if let onConnection { onConnection(c) } else { c.close() }
                    }
                    port.store(listener.port, ordering: .relaxed)
                    var receiver: InboxReceiver<Bool>?
                    receiver = InboxReceiver(loop: loop, inbox: stop, keepsLoopAlive: true) { _ in
                        listener.close()
                        for c in kept { c.abort() }
                        receiver?.close()
                    }
                    ready.signal()
                    loop.run()
                } catch {
                    failure.withLock { $0 = "\(error)" }
                    ready.signal()
                }
                _ = loop.close()
                done.signal()
            }
            thread.start()
            ready.wait()
            if let f = failure.withLock({ $0 }) { throw WaitTimeout(what: "listening: \(f)") }
        }

        func finish() {
            stop.post(true)
            done.wait()
        }
    }

    @Test func loopsSharingAPortEachAcceptSomeOfTheConnections() async throws {
        let first = try AcceptingLoop(port: 0)
        let port = first.port.load(ordering: .relaxed)
        let second = try AcceptingLoop(port: port)
        defer { first.finish(); second.finish() }
        let total = 200
        var clients: [RawConnection] = []
        for _ in 0..<total { clients.append(try RawConnection(port: port)) }
        _ = try await waitFor("every connection accepted") {
            first.accepted.load(ordering: .relaxed) + second.accepted.load(ordering: .relaxed) == total ? true : nil
        }
        #expect(first.accepted.load(ordering: .relaxed) > 0)
        #expect(second.accepted.load(ordering: .relaxed) > 0)
    }
}

extension LoopListenerTests {
    /// A connection accepted on one loop moves to another (a session going to
    /// the loop that serves it): the peer keeps talking, and what it sends
    /// next is read there.
    @Test func aConnectionMovesToAnotherLoopWithoutThePeerNoticing() async throws {
        let sockets = LoopInbox<Int32>()
        let moved = Atomic<Bool>(false)
        let stop = LoopInbox<Bool>()
        let done = DispatchSemaphore(value: 0)
        let ready = DispatchSemaphore(value: 0)
        // Loop B adopts sockets and echoes what it reads, prefixed with "B:".
        let b = Thread {
            let loop = EventLoop()
            var kept: [TCPConnection] = []
            var adoption: InboxReceiver<Int32>?
            var stopper: InboxReceiver<Bool>?
            adoption = InboxReceiver(loop: loop, inbox: sockets, keepsLoopAlive: true) { fds in
                for fd in fds {
                    guard let c = TCPConnection.adopt(loop: loop, socket: fd) else { continue }
                    moved.store(true, ordering: .relaxed)
                    c.onRead = { [unowned c] bytes in
                        c.enqueue(Array("B:".utf8) + Array(bytes))
                        c.flush()
                    }
                    c.startReading()
                    kept.append(c)
                }
            }
            stopper = InboxReceiver(loop: loop, inbox: stop, keepsLoopAlive: true) { _ in
                for c in kept { c.close() }
                adoption?.close()
                stopper?.close()
            }
            // An inbox takes posts only once its receiver exists.
            ready.signal()
            loop.run()
            _ = loop.close()
            done.signal()
        }
        b.start()
        ready.wait()
        // Loop A accepts, reads the first bytes, and hands the socket to B.
        let a = try LoopListenerTests.AcceptingLoop(port: 0) { c in
            c.onRead = { [unowned c] _ in
                if let fd = c.detachSocket() { sockets.post(fd) }
            }
            c.startReading()
        }
        defer { a.finish(); stop.post(true); done.wait() }
        let client = try RawConnection(port: a.port.load(ordering: .relaxed))
        client.send(Array("hello".utf8))
        _ = try await waitFor("the socket to move to loop B") { moved.load(ordering: .relaxed) ? true : nil }
        client.send(Array("again".utf8))
        let echoed = try await waitFor("loop B's echo") { () -> String? in
            let text = client.readAvailable()
            return text.isEmpty ? nil : text
        }
        #expect(echoed == "B:again")
    }
}
