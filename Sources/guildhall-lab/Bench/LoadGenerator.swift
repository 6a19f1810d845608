// The load generator: one libuv loop in the bench process driving S
// subscriber and P publisher connections against a server on loopback.
// Publishers send M messages each, at full speed with a window of W
// unacknowledged publishes, or at a fixed total rate. Subscribers find
// records in their byte streams and measure latency from the timestamp in
// each record, loss (expected minus received) and order per publisher.

import Foundation
import GuildhallCore
import GuildhallLoop
import GuildhallTLS
import Synchronization

struct LoadShape {
    var subscribers = 1000
    var publishers = 1
    var messages = 10_000
    var bytes = 100
    /// Total publishes per second across publishers; 0 = as fast as acknowledgements allow.
    var rate = 0
    var window = 64
    /// Whether records carry meaningful timestamps and per-publisher order (not for the sink).
    var measureRecords = true
    var connectTimeout = 60.0
    var drainTimeout = 10.0
    /// Sink only: records each subscriber asks the sink for.
    var sinkRecords = 0
    /// Connections being opened at once; more wait, so the listener's backlog never overflows.
    var maxConnecting = 256
    /// Extra subscribers that stop reading once subscribed (slow consumers); not measured.
    var stalled = 0
    /// Subscribers acknowledge events after this many (frees the server's replay buffer).
    var ackEvery = 256
    /// TCP (with TLS or not), or WebSocket (binary or JSON) to Guildhall's WebSocket listener.
    var transport = BenchTransport.tcp
    /// With TLS: the CA the server's certificate chains to.
    var caFile = ""
    /// Guildhall only, without subscribers: publishes are chat-like text (GuildhallWire.textBodies).
    var textBodies = false

    /// Channels (Guildhall only): subscriber and publisher i use channel i % channels, so each
    /// subscriber hears publishers / channels of them (both must be multiples of it).
    var channels = 1

    var expected: UInt64 {
        sinkRecords > 0 ? UInt64(subscribers) * UInt64(sinkRecords) : UInt64(subscribers) * UInt64(publishers / channels) * UInt64(messages)
    }
}

struct LoadResult {
    var deliveries: UInt64 = 0
    var expected: UInt64 = 0
    var outOfOrder: UInt64 = 0
    var seconds = 0.0
    var sendSeconds = 0.0
    var published = 0
    var latency = LatencyHistogram()
    /// At a fixed rate: how late each publish left against its place in the
    /// schedule (the generator's own lag, part of every latency figure).
    var scheduleLag = LatencyHistogram()
    var connectSeconds = 0.0
    /// CPU time the load generator itself used while running (user + system).
    var generatorCPUSeconds = 0.0
    var failure: String?

    var deliveriesPerSecond: Double { seconds > 0 ? Double(deliveries) / seconds : 0 }
    var lost: UInt64 { expected > deliveries ? expected - deliveries : 0 }
}

final class LoadGenerator {
    final class Peer {
        let index: Int
        var connection: TCPConnection?
        var acks: AckCounter
        var readyAcks = 0
        var ready = false
        // Publisher state.
        var sent = 0
        var acked = 0
        var sinceBatchEnd = 0
        // Subscriber state.
        var scanner = RecordScanner()
        var nextSeq: [UInt64]
        var received: UInt64 = 0
        /// Stops reading once ready (a slow consumer).
        var stalls = false
        /// Over WebSocket: the handshake, and frames each way.
        var link: WebSocketBenchLink?

        /// What to write for length-prefixed frames `bytes` on this peer's transport.
        func wrap(_ bytes: [UInt8]) -> [UInt8] { link?.outbound(bytes) ?? bytes }

        init(index: Int, acks: AckCounter, publishers: Int) {
            self.index = index
            self.acks = acks
            self.nextSeq = [UInt64](repeating: 0, count: max(publishers, 1))
        }
    }

    let loop = EventLoop()
    let wire: BenchWire
    let shape: LoadShape
    let host: String
    let port: Int
    var subscribers: [Peer] = []
    var publishers: [Peer] = []
    var stalledPeers: [Peer] = []
    var result = LoadResult()
    var startNanos: UInt64 = 0
    var lastDelivery: UInt64 = 0
    var phase = 0  // 0 connecting, 1 running, 2 done
    var timer: LoopTimer!
    var payload: [UInt8] = []
    var out: [UInt8] = []
    /// Peers waiting to connect, and how many are connecting now.
    var waiting: [(Peer, Bool)] = []
    var connecting = 0
    /// Called once every connection is ready, before any publish (to sample the server).
    var onReady: (() -> Void)?
    let debug = ProcessInfo.processInfo.environment["GUILDHALL_BENCH_DEBUG"] != nil
    var lastReport: UInt64 = 0
    /// Publishes made at a fixed rate so far: the next one's place in the schedule.
    var scheduled = 0
    var cpuAtStart = 0.0
    /// At a fixed rate, a thread that wakes the loop at each publish's
    /// scheduled time (libuv's timers have millisecond steps, and a 1 ms
    /// timer was late by 2.4 ms at p99: that, not the servers, was shape F).
    let pacerTicks = LoopInbox<Bool>()
    var pacerReceiver: InboxReceiver<Bool>?
    let pacerStop = PacerStop()

    /// With several (a cluster's nodes), subscriber i connects to ports[i % count], publishers to the first.
    var ports: [Int]

    init(wire: BenchWire, shape: LoadShape, host: String = "127.0.0.1", port: Int, ports: [Int] = []) {
        self.wire = wire
        self.shape = shape
        self.host = host
        self.port = port
        self.ports = ports.isEmpty ? [port] : ports
    }

    /// Runs the whole load; returns when done or failed.
    func run() -> LoadResult {
        result.expected = shape.expected
        let connectStart = BenchRecord.monotonicNanos()
        for i in 0..<shape.subscribers {
            let p = Peer(index: i, acks: wire.makeAckCounter(), publishers: shape.publishers)
            subscribers.append(p)
            waiting.append((p, true))
        }
        for i in 0..<shape.publishers {
            let p = Peer(index: i, acks: wire.makeAckCounter(), publishers: shape.publishers)
            publishers.append(p)
            waiting.append((p, false))
        }
        for i in 0..<shape.stalled {
            let p = Peer(index: shape.subscribers + i, acks: wire.makeAckCounter(), publishers: shape.publishers)
            p.stalls = true
            stalledPeers.append(p)
            waiting.append((p, true))
        }
        waiting.reverse()
        openMore()
        timer = LoopTimer(loop: loop)
        timer.start(afterMillis: 1, repeatMillis: 1) { [unowned self] in self.tick(connectStart: connectStart) }
        loop.run()
        _ = loop.close()
        return result
    }

    private func openMore() {
        while connecting < shape.maxConnecting, let (peer, subscriber) = waiting.popLast() {
            connecting += 1
            open(peer, subscriber: subscriber)
        }
    }

    private func becameReady(_ peer: Peer) {
        peer.ready = true
        if peer.stalls { peer.connection?.stopReading() }
        connecting -= 1
        openMore()
    }

    private func open(_ peer: Peer, subscriber: Bool) {
        let target = subscriber ? ports[peer.index % ports.count] : ports[0]
        TCPConnection.connect(loop: loop, host: host, port: target) { [unowned self] conn, status in
            guard let conn else {
                self.fail("connect failed: \(UVError.text(status))")
                return
            }
            peer.connection = conn
            conn.onRead = { [unowned self] bytes in self.read(bytes, peer: peer, subscriber: subscriber) }
            conn.onEnd = { [unowned self] status in
                // A stalled subscriber may be cut as a slow consumer: that is the point of it.
                if self.phase < 2 && !peer.stalls { self.fail("the server closed a connection: \(UVError.text(status))") }
            }
            conn.startReading()
            if self.shape.transport == .tls {
                do {
                    let stream = try TLSStream(context: TLSContext.client(caFile: self.shape.caFile), host: self.host)
                    try stream.start()
                    conn.startTLS(stream, early: UnsafeRawBufferPointer(start: nil, count: 0))
                } catch {
                    return self.fail("TLS: \(error)")
                }
            }
            if self.shape.transport.isWebSocket {
                let link = WebSocketBenchLink(json: self.shape.transport == .wsJSON)
                peer.link = link
                conn.enqueue(link.handshake)
            }
            conn.enqueue(peer.wrap(subscriber ? self.wire.subscriberHello(peer.index) : self.wire.publisherHello(peer.index)))
            conn.flush()
            if (subscriber ? self.wire.subscriberReadyAcks : self.wire.publisherReadyAcks) == 0 { self.becameReady(peer) }
        }
    }

    private func read(_ bytes: UnsafeRawBufferPointer, peer: Peer, subscriber: Bool) {
        guard let link = peer.link else { return readStream(bytes, peer: peer, subscriber: subscriber) }
        do {
            let (stream, send) = try link.inbound(bytes)
            if !send.isEmpty, let conn = peer.connection {
                conn.enqueue(send)
                conn.flush()
            }
            if !stream.isEmpty { stream.withUnsafeBytes { readStream($0, peer: peer, subscriber: subscriber) } }
        } catch {
            fail("\(error)")
        }
    }

    /// Reads what TCP carries (a WebSocket's messages turned back into it).
    private func readStream(_ bytes: UnsafeRawBufferPointer, peer: Peer, subscriber: Bool) {
        if subscriber {
            if !peer.ready {
                peer.readyAcks += peer.acks.count(bytes)
                if peer.readyAcks >= wire.subscriberReadyAcks { becameReady(peer) }
            }
            if peer.stalls { return }
            let now = BenchRecord.monotonicNanos()
            var got: UInt64 = 0
            peer.scanner.scan(bytes) { publisher, seq, sent in
                got += 1
                guard shape.measureRecords else { return }
                result.latency.record(now > sent ? now - sent : 0)
                let p = Int(publisher)
                if p < peer.nextSeq.count {
                    if seq != peer.nextSeq[p] { result.outOfOrder += 1 }
                    peer.nextSeq[p] = seq + 1
                }
            }
            if got > 0 {
                let every = UInt64(shape.ackEvery)
                if (peer.received + got) / every != peer.received / every, let conn = peer.connection {
                    var ack: [UInt8] = []
                    wire.appendSubscriberAck(received: peer.received + got, to: &ack)
                    if !ack.isEmpty {
                        conn.enqueue(peer.wrap(ack))
                        conn.flush()
                    }
                }
                peer.received += got
                result.deliveries += got
                lastDelivery = now
                if result.deliveries >= result.expected && phase == 1 { finish() }
            }
        } else {
            let acks = peer.acks.count(bytes)
            if !peer.ready {
                peer.readyAcks += acks
                if peer.readyAcks >= wire.publisherReadyAcks { becameReady(peer) }
                return
            }
            peer.acked += acks * wire.publishesPerAck
            // Acknowledgements are progress too: without subscribers they are the only sign of it.
            if acks > 0 && shape.subscribers == 0 { lastDelivery = BenchRecord.monotonicNanos() }
            if phase == 1 && shape.subscribers == 0 && publishers.allSatisfy({ $0.acked >= shape.messages }) {
                lastDelivery = BenchRecord.monotonicNanos()
                finish()
                return
            }
            if phase == 1 && shape.rate == 0 { pump(peer) }
        }
    }

    /// Sends what the window (and, at a fixed rate, the schedule) allows.
    private func pump(_ peer: Peer, allowance: Int = .max) {
        guard let conn = peer.connection else { return }
        var budget = allowance
        while peer.sent < shape.messages && peer.sent - peer.acked < shape.window && budget > 0 {
            // At a fixed rate a publish is stamped with its time in the schedule,
            // not when a late tick got to it: otherwise the generator's own lag
            // hides from the latency (coordinated omission).
            let now = BenchRecord.monotonicNanos()
            var stamp = now
            if shape.rate > 0 {
                stamp = startNanos + UInt64(Double(scheduled) * 1e9 / Double(shape.rate))
                result.scheduleLag.record(now > stamp ? now - stamp : 0)
            }
            scheduled += 1
            BenchRecord.make(size: shape.bytes, publisher: UInt32(peer.index), seq: UInt64(peer.sent),
                             sentNanos: stamp, into: &payload)
            out.removeAll(keepingCapacity: true)
            wire.appendPublish(payload, publisher: peer.index, to: &out)
            peer.sent += 1
            peer.sinceBatchEnd += 1
            budget -= 1
            if peer.sinceBatchEnd == wire.publishesPerAck || peer.sent == shape.messages && wire.publishesPerAck > 1 {
                wire.appendBatchEnd(to: &out)
                peer.sinceBatchEnd = 0
            }
            conn.enqueue(peer.wrap(out))
        }
        conn.flush()
        if peer.sent == shape.messages && result.sendSeconds == 0 && publishers.allSatisfy({ $0.sent == shape.messages }) {
            result.sendSeconds = Double(BenchRecord.monotonicNanos() - startNanos) / 1e9
        }
    }

    private func tick(connectStart: UInt64) {
        let now = BenchRecord.monotonicNanos()
        switch phase {
        case 0:
            if waiting.isEmpty && subscribers.allSatisfy(\.ready) && publishers.allSatisfy(\.ready) && stalledPeers.allSatisfy(\.ready) {
                result.connectSeconds = Double(now - connectStart) / 1e9
                onReady?()
                phase = 1
                cpuAtStart = Self.cpuSeconds()
                startNanos = BenchRecord.monotonicNanos()
                lastDelivery = startNanos
                if shape.expected == 0 && (shape.publishers == 0 || shape.messages == 0) { finish(); return }
                if shape.rate == 0 { for p in publishers { pump(p) } } else { startPacer(); publishDue() }
            } else if Double(now - connectStart) / 1e9 > shape.connectTimeout {
                let ready = subscribers.filter(\.ready).count + publishers.filter(\.ready).count
                fail("only \(ready) of \(subscribers.count + publishers.count) connections ready after \(shape.connectTimeout) s")
            }
        case 1:
            if debug && now - lastReport > 1_000_000_000 {
                lastReport = now
                let sent = publishers.reduce(0) { $0 + $1.sent }, acked = publishers.reduce(0) { $0 + $1.acked }
                FileHandle.standardError.write(Data("sent \(sent) acked \(acked) delivered \(result.deliveries)/\(result.expected)\n".utf8))
            }
            if shape.rate > 0 { publishDue() }
            let allSent = shape.sinkRecords > 0 || publishers.allSatisfy { $0.sent == shape.messages }
            if Double(now - lastDelivery) / 1e9 > shape.drainTimeout {
                if allSent && result.deliveries >= result.expected { finish(); return }
                if allSent {
                    // Deliveries stopped short: a lossy run must not score.
                    fail("no delivery for \(shape.drainTimeout) s with \(result.deliveries) of \(result.expected) delivered")
                    return
                }
                // Publishers wait for acknowledgements that do not come (failed sends are not counted as acknowledged).
                let sent = publishers.reduce(0) { $0 + $1.sent }, acked = publishers.reduce(0) { $0 + $1.acked }
                fail("no progress for \(shape.drainTimeout) s: \(sent) sent, \(acked) acknowledged, \(result.deliveries) delivered")
            }
        default:
            break
        }
    }

    /// At a fixed rate: the publishes due by now, spread over the publishers.
    private func publishDue() {
        guard phase == 1 else { return }
        // Publish j (from 0) is scheduled at start + j/rate, the time its record carries.
        let due = Int(Double(BenchRecord.monotonicNanos() - startNanos) / 1e9 * Double(shape.rate)) + 1
        let sent = publishers.reduce(0) { $0 + $1.sent }
        var owed = due - sent
        // One at a time, round the publishers from where the last turn stopped: a turn owes
        // one or two, and starting from the first each time had p0 publish everything first
        // (its channel flooded, the others' subscribers silent long enough to be cut as idle).
        var idle = 0
        while owed > 0 && idle < publishers.count {
            let p = publishers[nextPublisher]
            nextPublisher = (nextPublisher + 1) % publishers.count
            let before = p.sent
            pump(p, allowance: 1)
            if p.sent > before { owed -= 1; idle = 0 } else { idle += 1 }
        }
    }

    /// The publisher the next publish at a fixed rate starts from.
    private var nextPublisher = 0

    private func startPacer() {
        pacerReceiver = InboxReceiver(loop: loop, inbox: pacerTicks) { [unowned self] _ in self.publishDue() }
        let ticks = pacerTicks, stop = pacerStop, start = startNanos
        let total = shape.messages * shape.publishers, period = 1e9 / Double(shape.rate)
        NamedThread.start("bench-pacer") {
            for k in 1..<max(total, 1) {
                let at = start + UInt64(Double(k) * period)
                var ts = timespec(tv_sec: Int(at / 1_000_000_000), tv_nsec: Int(at % 1_000_000_000))
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
                if stop.flag.load(ordering: .relaxed) || !ticks.post(true) { return }
            }
        }
    }

    private func finish() {
        guard phase != 2 else { return }
        phase = 2
        pacerStop.flag.store(true, ordering: .relaxed)
        pacerReceiver?.close()
        pacerReceiver = nil
        result.seconds = Double(lastDelivery - startNanos) / 1e9
        result.published = publishers.reduce(0) { $0 + $1.sent }
        if cpuAtStart > 0 { result.generatorCPUSeconds = Self.cpuSeconds() - cpuAtStart }
        timer.close()
        for p in subscribers + publishers + stalledPeers { p.connection?.abort() }
    }

    /// This process's CPU time so far (user + system), in seconds.
    static func cpuSeconds() -> Double {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return Double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + Double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6
    }

    private func fail(_ why: String) {
        guard phase != 2 else { return }
        result.failure = why
        finish()
    }
}

/// Tells the pacer thread to stop.
final class PacerStop: Sendable {
    let flag = Atomic<Bool>(false)
}
